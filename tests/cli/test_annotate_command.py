"""``nlpbench annotate --command``: the tool started in the sandbox, used, and stopped."""

from __future__ import annotations

import functools
import signal
import socket
import subprocess
import sys
import time

import httpx
import psutil

from nlpbench import formats
from nlpbench.model import Document

SERVE_PHI = f"{sys.executable} -m nlpbench serve --annotator phi"
TEXTS = [
    "On 12/26/2020, Ms. Chloe Price met with Dr. Prescott in Seattle.",
    "Mary Williamson (SSN 123-45-6789) came back on March 3, 2021.",
    "Call (206) 555-0101 or write to mary@example.org before 1/2/2021.",
]


def write_notes(tmp_path):
    path = tmp_path / "notes.json"
    documents = [Document(f"note-{i}", text, metadata={"patientId": "p-1"}) for i, text in enumerate(TEXTS)]
    formats.get("sandbox-bundles").write(documents, path)
    return path


def serve_normally(port: int) -> subprocess.Popen:
    process = subprocess.Popen([*SERVE_PHI.split(), "--port", str(port)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/v1/healthCheck").raise_for_status()
            return process
        except httpx.TransportError:
            assert process.poll() is None and time.monotonic() < deadline, "the tool did not start"
            time.sleep(0.2)


def test_annotate_command_gives_what_the_same_tool_started_normally_gives(cli, tmp_path):
    notes = write_notes(tmp_path)
    sandboxed, plain = tmp_path / "sandboxed.json", tmp_path / "plain.json"
    before = {process.pid for process in psutil.Process().children(recursive=True)}

    result = cli("annotate", "--command", f"{SERVE_PHI} --port 8080", "--notes", notes, "--out", sandboxed)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"{sandboxed}: wrote 3 notes, ")
    assert "nlpbench-phi-annotator" in result.stderr
    log = (tmp_path / "sandboxed.json.tool.log").read_text()
    assert "Application startup complete" in log  # the tool's output, in its log
    assert {process.pid for process in psutil.Process().children(recursive=True)} <= before  # nothing left running

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = serve_normally(port)
    try:
        result = cli("annotate", "--tool", f"http://127.0.0.1:{port}", "--notes", notes, "--out", plain)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    assert result.exit_code == 0, result.stderr
    assert sandboxed.read_bytes() == plain.read_bytes()
    assert sandboxed.read_bytes().count(b'"start"') > 3


def test_a_command_that_fails_to_start_is_one_line_without_its_output(cli, tmp_path):
    out, log = tmp_path / "out.json", tmp_path / "tool.log"
    args = ("annotate", "--notes", write_notes(tmp_path), "--out", out, "--tool-log", log)
    result = cli(*args, "--command", "echo 'Chloe Price, 12/26/2020' >&2; exit 3")
    assert result.exit_code == 2
    assert result.stderr == (
        "nlpbench: error: --command: the tool ended before it answered GET /api/v1/healthCheck: "
        f"the tool exited with status 3 (its output is in {log})\n"
    )
    assert log.read_text() == "Chloe Price, 12/26/2020\n"
    assert not out.exists()


def test_tool_and_command_are_one_of_the_two(cli, tmp_path):
    notes, out = write_notes(tmp_path), tmp_path / "out.json"
    both = cli("annotate", "--tool", "http://127.0.0.1:1", "--command", "true", "--notes", notes, "--out", out)
    neither = cli("annotate", "--notes", notes, "--out", out)
    for result in (both, neither):
        assert result.exit_code == 2
        assert result.stderr == 'nlpbench: error: give the tool as --tool URL or as --command "…", one of the two\n'


#: The baseline PHI tool, which starts holding 400 MiB once validation's five probe requests are done.
GROWING_TOOL = """\
import os, uvicorn
from nlpbench.annotators import REGISTRY
from nlpbench.api.tool import create_app

app = create_app(REGISTRY.get("phi")())
held, posts = [], []

@app.middleware("http")
async def grow(request, call_next):
    if request.method == "POST":
        posts.append(1)
        if len(posts) > 6:
            held.extend(bytearray(b"x" * 2**20) for _ in range(400))
    return await call_next(request)

uvicorn.run(app, host="0.0.0.0", port=int(os.environ["PORT"]), log_level="warning")
"""


def test_a_tool_killed_at_its_memory_limit_mid_run_is_named_with_the_reason(cli, tmp_path, monkeypatch):
    from nlpbench.runner import sandbox

    monkeypatch.setattr(sandbox, "Limits", functools.partial(sandbox.Limits, memory_bytes=300 * 2**20))
    folder = tmp_path / "tool"
    folder.mkdir(mode=0o755)  # the tool's own directory, which it reads as an unprivileged user
    (folder / "growing.py").write_text(GROWING_TOOL)
    out = tmp_path / "out.json"
    args = ("annotate", "--notes", write_notes(tmp_path), "--out", out, "--concurrency", "1", "--retries", "1")
    result = cli(*args, "--command", f"{sys.executable} growing.py", "--tool-dir", folder)
    assert result.exit_code == 2
    assert result.stderr.startswith("nlpbench: error: http://tool/api/v1: POST /")
    assert "(the tool exceeded its memory limit of 300 MiB; its output is in " in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()


def test_a_tool_log_that_cannot_be_written_is_one_line(cli, tmp_path):
    log = tmp_path / "missing" / "tool.log"
    args = ("annotate", "--notes", write_notes(tmp_path), "--out", tmp_path / "out.json", "--tool-log", log)
    result = cli(*args, "--command", f"{SERVE_PHI} --port 8080")
    assert result.exit_code == 2
    assert result.stderr == f"nlpbench: error: {log}: no such file\n"
