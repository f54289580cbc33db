"""The sandbox as an unprivileged user: nlpbench run as uid 65534, so bubblewrap makes a user namespace.

The tests run as root (here and in CI), where bubblewrap runs as root and the
tool as uid 65534 without a user namespace; these start ``nlpbench annotate
--command`` and ``nlpbench worker`` as uid 65534 (see
:mod:`tests.runner.unprivileged`), where bubblewrap maps the user to itself in
a user namespace instead, and check the same promises end to end: the tool
answers over the namespace's loopback, reaches nothing outside, sees none of
the host's processes, is stopped at its memory limit with the reason, and
leaves no process behind. A tool reports what it saw on its output (the tool
log): a sandboxed tool can write nowhere the host reads.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import psutil
import pytest

from nlpbench.store import open_store, repository
from tests.cli.test_annotate_command import SERVE_PHI, TEXTS, write_notes
from tests.platform.test_worker import HUNGRY, shown, submit
from tests.runner.unprivileged import NOBODY, Unprivileged
from tests.toolkit import unique_marker

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

marker, host_port = sys.argv[1], int(sys.argv[2])
sleep = [sys.executable, "-c", "import time; time.sleep(300)", marker]
children = [subprocess.Popen(sleep, start_new_session=session).pid for session in (False, True)]
seen = {
    "uid_map": open("/proc/self/uid_map").read().split(),
    "pids": [os.getpid(), *children],
    "visible": sorted(int(name) for name in os.listdir("/proc") if name.isdigit()),
    "first": open("/proc/1/cmdline").read().split("\\0"),
}


def tell():
    print("REPORT", json.dumps(seen), flush=True)


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


def tool_command(nobody: Unprivileged, host_port: int = 0) -> tuple[str, str]:
    """The tool's command (its script in the user's folder, given as --tool-dir) and the marker its children carry,
    drawn for this run (:func:`unique_marker`): the folder's name had it, which two test processes share."""
    (nobody.base / "tool.py").write_text(TOOL)
    marker = unique_marker("marker")
    return f"{sys.executable} tool.py {marker} {host_port}", marker


def seen(log: Path) -> dict:
    """What the tool last reported on its output."""
    reports = [line for line in log.read_text().splitlines() if line.startswith("REPORT ")]
    assert reports, log.read_text()[-500:]
    return json.loads(reports[-1].removeprefix("REPORT "))


def running(marker: str) -> list[psutil.Process]:
    """The host's processes with ``marker`` in their command line."""
    return [p for p in psutil.process_iter(["cmdline"]) if marker in (p.info["cmdline"] or [])]


def annotated(nobody: Unprivileged, command: str, *options: str):
    notes, out = write_notes(nobody.base), nobody.base / "out.json"
    nobody.own(notes)
    run = nobody.nlpbench(
        "annotate", "--command", command, "--tool-dir", nobody.base, "--notes", notes, "--out", out, *options
    )
    return run, out


def test_as_an_unprivileged_user_a_command_annotates_as_it_does_for_root(nobody, cli, tmp_path):
    command, marker = tool_command(nobody)
    result, out = annotated(nobody, command)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{out}: wrote 3 notes, ")
    report = seen(nobody.base / "out.json.tool.log")
    # itself, one uid mapped (to bubblewrap's intermediate namespace, whose root is the user: devpts needs it)
    assert report["uid_map"][0] == str(NOBODY) and report["uid_map"][2] == "1" and len(report["uid_map"]) == 3
    assert "bwrap" in report["first"][0]  # /proc is the PID namespace's: bubblewrap's init is process 1 ...
    assert set(report["pids"]) < set(report["visible"]) and len(report["visible"]) < 9  # ... the host's are not there
    assert not running(marker)  # the tool and both its children ended with the run

    as_root = tmp_path / "as-root.json"
    args = ("--notes", write_notes(tmp_path), "--out", as_root)
    assert cli("annotate", "--command", f"{SERVE_PHI} --port 8080", *args).exit_code == 0
    assert out.read_bytes() == as_root.read_bytes()
    assert out.read_bytes().count(b'"start"') > 3


def test_as_an_unprivileged_user_a_tool_cannot_connect_out_and_the_failure_quotes_nothing(nobody, listener):
    command, marker = tool_command(nobody, listener.getsockname()[1])
    result, out = annotated(nobody, command, "--retries", "0")
    assert result.returncode == 2
    assert result.stderr.startswith("nlpbench: error: http://tool/api/v1") and result.stderr.count("\n") == 1
    assert "HTTP 502" in result.stderr
    for quoted in ("exfiltration", "Error(", *TEXTS):
        assert quoted not in result.stderr
    assert seen(nobody.base / "out.json.tool.log")["host"] in ("ConnectionRefusedError", "OSError", "TimeoutError")
    with pytest.raises(BlockingIOError):  # nothing reached the listener
        listener.accept()
    assert not out.exists() and not running(marker)


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

    worker = ("worker", "--until-idle", "--poll", "0.05", "--lease", "10", "--runtime", nobody.base, "--db", db)
    worked = nobody.nlpbench(*worker)
    assert worked.returncode == 0, worked.stderr
    data = shown(nb, submission)
    assert (data["status"], data["reason"]) == ("FAILED", "the tool exceeded its memory limit of 400 MiB")
    assert not running(str(script))


def test_without_root_or_user_namespaces_a_command_is_refused_in_one_line(nobody):
    fake = nobody.base / "bin"
    fake.mkdir()
    for program in ("bwrap", "runsc"):
        (fake / program).write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
        (fake / program).chmod(0o755)
    notes, out = write_notes(nobody.base), nobody.base / "out.json"
    nobody.own(notes)
    path = f"{fake}:{os.environ['PATH']}"
    result = nobody.nlpbench("annotate", "--command", "true", "--notes", notes, "--out", out, path=path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        "nlpbench: error: --command: no sandbox can run a tool here "
        "(bwrap: bwrap: No permissions to create new namespace; runsc: "
    )
    assert not out.exists() and not (nobody.base / "out.json.tool.log").exists()
