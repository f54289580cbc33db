"""The sandbox as an unprivileged user: nlpbench run as uid 65534, so the tool runs in a user namespace.

The tests run as root (here and in CI), where the sandbox uses ``unshare --net
--pid`` directly; these start ``nlpbench annotate --command`` and ``nlpbench
worker`` as uid 65534 (see :mod:`tests.runner.unprivileged`), where it maps
root in a user namespace instead, and check the same promises end to end: the
tool answers over the namespace's loopback, reaches nothing outside, is
stopped at its memory limit with the reason, and leaves no process behind.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import psutil
import pytest

from nlpbench.runner import sandbox
from nlpbench.store import open_store, repository
from tests.cli.test_annotate_command import SERVE_PHI, TEXTS, write_notes
from tests.platform.test_worker import HUNGRY, shown, submit
from tests.runner.unprivileged import NOBODY, Unprivileged

#: The baseline PHI tool, which first says who it runs as and what its /proc shows, and starts two children
#: (one in a session of its own) whose command lines hold the report's path, to be looked for from the host.
#: Given a port of the host's, it tries to connect there on each POST: failing, it answers 502 with a body
#: quoting the note and the error (which no message may repeat).
TOOL = """\
import json, os, socket, subprocess, sys
import uvicorn
from fastapi.responses import JSONResponse
from nlpbench.api.tool import create_app
from nlpbench.cli.serve import build_annotator

report, host_port = sys.argv[1], int(sys.argv[2])
sleep = [sys.executable, "-c", "import time; time.sleep(300)", report]
children = [subprocess.Popen(sleep, start_new_session=session).pid for session in (False, True)]
seen = {
    "uid_map": open("/proc/self/uid_map").read().split(),
    "pids": [os.getpid(), *children],
    "visible": sorted(int(name) for name in os.listdir("/proc") if name.isdigit()),
    "first": open("/proc/1/cmdline").read().split("\\0"),
}


def tell():
    with open(report, "w") as out:
        json.dump(seen, out)


app = create_app(build_annotator("phi"))


@app.middleware("http")
async def reach_out(request, call_next):
    if request.method == "POST" and host_port:
        try:
            socket.create_connection(("127.0.0.1", host_port), timeout=3).close()
            seen["host"] = "connected"
        except OSError as error:
            seen["host"] = type(error).__name__
            tell()
            note = (await request.body()).decode()
            return JSONResponse({"detail": f"exfiltration of {note} failed: {error!r}"}, status_code=502)
        tell()
    return await call_next(request)


tell()
uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
"""


@pytest.fixture
def nobody(tmp_path) -> Unprivileged:
    return Unprivileged.ready(tmp_path / "nobody")


@pytest.fixture
def listener():
    """A TCP server on the host's 127.0.0.1 (the kernel completes connections to it without accept())."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.setblocking(False)
        yield server


def tool_command(nobody: Unprivileged, host_port: int = 0) -> tuple[str, Path]:
    script, report = nobody.base / "tool.py", nobody.base / "report.json"
    script.write_text(TOOL)
    return f"{sys.executable} {script} {report} {host_port}", report


def running(marker: Path) -> list[psutil.Process]:
    """The host's processes with ``marker`` in their command line."""
    return [p for p in psutil.process_iter(["cmdline"]) if str(marker) in (p.info["cmdline"] or [])]


def annotated(nobody: Unprivileged, command: str, *options: str):
    notes, out = write_notes(nobody.base), nobody.base / "out.json"
    nobody.own(notes)
    return nobody.nlpbench("annotate", "--command", command, "--notes", notes, "--out", out, *options), out


def test_as_an_unprivileged_user_a_command_annotates_as_it_does_for_root(nobody, cli, tmp_path):
    command, report = tool_command(nobody)
    result, out = annotated(nobody, command)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{out}: wrote 3 notes, ")
    seen = json.loads(report.read_text())
    assert seen["uid_map"] == ["0", str(NOBODY), "1"]  # root in a user namespace, uid 65534 outside
    assert str(sandbox.RELAY) in seen["first"]  # /proc is the PID namespace's: the relay is process 1 ...
    assert set(seen["pids"]) < set(seen["visible"]) and len(seen["visible"]) < 8  # ... and the host's are not there
    assert not running(report)  # the tool and both its children ended with the run

    as_root = tmp_path / "as-root.json"
    args = ("--notes", write_notes(tmp_path), "--out", as_root)
    assert cli("annotate", "--command", f"{SERVE_PHI} --port 8080", *args).exit_code == 0
    assert out.read_bytes() == as_root.read_bytes()
    assert out.read_bytes().count(b'"start"') > 3


def test_as_an_unprivileged_user_a_tool_cannot_connect_out_and_the_failure_quotes_nothing(nobody, listener):
    command, report = tool_command(nobody, listener.getsockname()[1])
    result, out = annotated(nobody, command, "--retries", "0")
    assert result.returncode == 2
    assert result.stderr.startswith("nlpbench: error: http://tool/api/v1") and result.stderr.count("\n") == 1
    assert "HTTP 502" in result.stderr
    for quoted in ("exfiltration", "Error(", *TEXTS):
        assert quoted not in result.stderr
    seen = json.loads(report.read_text())
    assert seen["host"] in ("ConnectionRefusedError", "OSError", "TimeoutError")
    with pytest.raises(BlockingIOError):  # nothing reached the listener
        listener.accept()
    assert not out.exists() and not running(report)


def test_as_an_unprivileged_user_a_worker_fails_a_command_over_its_memory_limit(nobody, cli):
    db = f"sqlite:///{nobody.base / 'platform.db'}"

    def nb(*args):
        return cli(*args, "--db", db)

    assert nb("synth", "--notes", 8, "--seed", 7, "--into-store", "notes", "--subset", 3).exit_code == 0
    opened = open_store(db)
    with opened.session(readonly=True) as session:
        last = [note.identifier for note in repository.iter_notes(session, "notes")][-1]
    opened.close()
    queued = nb("submissions", "queue", "default", "--tool-memory", "400", "--timeout", "5", "--retries", "1")
    assert queued.exit_code == 0, queued.stderr
    script = nobody.base / "hungry.py"
    script.write_text(HUNGRY.replace("{last}", last))
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--command", f"{sys.executable} {script}")
    nobody.own(*nobody.base.glob("platform.db*"))

    worked = nobody.nlpbench("worker", "--until-idle", "--poll", "0.05", "--lease", "10", "--db", db)
    assert worked.returncode == 0, worked.stderr
    data = shown(nb, submission)
    assert (data["status"], data["reason"]) == ("FAILED", "the tool exceeded its memory limit of 400 MiB")
    assert not running(script)


def test_without_root_or_user_namespaces_a_command_is_refused_in_one_line(nobody):
    fake = nobody.base / "bin"
    fake.mkdir()
    (fake / "unshare").write_text("#!/bin/sh\nexit 1\n")
    (fake / "unshare").chmod(0o755)
    notes, out = write_notes(nobody.base), nobody.base / "out.json"
    nobody.own(notes)
    path = f"{fake}:{os.environ['PATH']}"
    result = nobody.nlpbench("annotate", "--command", "true", "--notes", notes, "--out", out, path=path)
    assert (result.returncode, result.stderr) == (
        2,
        "nlpbench: error: --command: cannot start a sandbox here: not root, and user namespaces are not permitted "
        "(`unshare --map-root-user --net --pid --fork --kill-child` failed: unshare exited with status 1)\n",
    )
    assert not out.exists() and not (nobody.base / "out.json.tool.log").exists()


def test_as_root_a_failing_unshare_is_refused_in_one_line_with_its_words(cli, tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("the refusal as root, for root (the other one is tested above)")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "unshare").write_text("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n")
    (fake / "unshare").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    sandbox.namespace_command.cache_clear()
    try:
        result = cli("annotate", "--command", "true", "--notes", write_notes(tmp_path), "--out", tmp_path / "out.json")
    finally:
        sandbox.namespace_command.cache_clear()
    assert (result.exit_code, result.stderr) == (
        2,
        "nlpbench: error: --command: cannot start a sandbox here: `unshare --net --pid --fork --kill-child` failed "
        "as root: unshare: unshare failed: Operation not permitted\n",
    )
