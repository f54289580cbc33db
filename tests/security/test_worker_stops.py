"""However a worker stops — SIGTERM, Ctrl+C, kill -9 — its team tools end, and nothing is lost or left behind.

A worker runs (as ``nlpbench worker``, a process of its own) a team's tool that
answers slowly; once the tool is annotating, the worker is stopped. With
SIGTERM it ends the tool, gives the submission back to the queue at once and
exits with one line; killed outright, its sandbox dies with it (the kernel's
parent-death signal) and the next worker removes its private folder and takes
the submission over once the lease expires. Either way the next worker scores
every note once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from nlpbench.runner import sandbox
from nlpbench.store import open_store
from nlpbench.store.submissions import Submission
from tests.platform.test_worker import shown, submit, tool_folder
from tests.toolkit import unique_marker

#: The date annotator, answering each note after a pause (the marker in its command line finds it on the host).
SLOW = """\
import asyncio, sys
import uvicorn
from nlpbench.api.tool import create_app
from nlpbench.cli.serve import build_annotator

app = create_app(build_annotator("date"))


@app.middleware("http")
async def slowly(request, call_next):
    if request.method == "POST":
        await asyncio.sleep(0.5)
    return await call_next(request)


uvicorn.run(app, host="127.0.0.1", port=8080, log_level="warning")
"""


pytestmark = pytest.mark.usefixtures("bubblewrap")


def started_worker(db_url: str, folder: Path, lease: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "nlpbench", "worker", "--poll", "0.05", "--lease", lease,
               "--runtime", str(folder), "--db", db_url]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_until(condition, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} within {seconds:g} s")


def row(db_url: str, submission: str) -> Submission:
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            return session.get(Submission, int(submission))
    finally:
        opened.close()


def tools(marker: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"]) if any(marker in part for part in p.info["cmdline"] or [])]


def queued_slow_tool(nb, tmp_path) -> tuple[str, str]:
    """A slow tool's submission (one request at a time); its id and the marker of its script's path."""
    folder = tool_folder(tmp_path)
    script = folder / f"{unique_marker('slow')}.py"
    script.write_text(SLOW)
    assert nb("submissions", "queue", "default", "--concurrency", "1", "--quota", "0").exit_code == 0
    return submit(nb, "--task", "date", "--dataset", "notes", "--command", f"{sys.executable} {script}"), script.name


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_sigterm_ends_the_tool_and_gives_the_submission_back(nb, dataset, db_url, tmp_path):
    submission, marker = queued_slow_tool(nb, tmp_path)
    worker = started_worker(db_url, tmp_path / "tool", "60")
    wait_until(lambda: row(db_url, submission).notes_done > 0, "the tool annotates")
    assert tools(marker)
    worker.send_signal(signal.SIGTERM)
    _, said = worker.communicate(timeout=60)
    assert worker.returncode == 0
    assert "Traceback" not in said and "Task was destroyed" not in said and "Exception ignored" not in said, said
    assert said.splitlines()[-1] == f"worker: stopped by SIGTERM; submission {submission} given back to the queue"
    assert not tools(marker)
    stopped = row(db_url, submission)
    assert stopped.status == "ANNOTATING" and stopped.lease_expires_at.timestamp() <= time.time()
    done = stopped.notes_done
    result = nb("worker", "--until-idle", "--poll", "0.05", "--lease", "10", "--runtime", str(tmp_path / "tool"))
    assert result.exit_code == 0, result.stderr
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert data["progress"] == {"done": len(dataset), "total": len(dataset)} and done < len(dataset)
    assert "taken over by worker" in json.dumps(data["events"])


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_killed_worker_takes_its_tool_with_it_and_the_next_one_clears_what_it_left(nb, dataset, db_url, tmp_path):
    submission, marker = queued_slow_tool(nb, tmp_path)
    worker = started_worker(db_url, tmp_path / "tool", "2")
    wait_until(lambda: row(db_url, submission).notes_done > 0, "the tool annotates")
    owner = sandbox._tag(psutil.Process(worker.pid))
    left = [found for place in sandbox.places() for found in place.glob(f"{sandbox.PREFIX}{owner}-*")]
    assert left  # its sandbox's private folder, while it runs
    worker.kill()
    worker.wait()
    wait_until(lambda: not tools(marker), "the tool dies with its worker", 30)
    assert all(path.exists() for path in left)  # nobody removed them: the dead worker could not
    time.sleep(2.5)  # its lease expires
    result = nb("worker", "--until-idle", "--poll", "0.05", "--lease", "10", "--runtime", str(tmp_path / "tool"))
    assert result.exit_code == 0, result.stderr
    assert shown(nb, submission)["status"] == "SCORED"
    sandbox.reap_leftovers.cache_clear()  # this process reaped before the worker died: look again, as a new one
    sandbox.reap_leftovers()
    assert not any(path.exists() for path in left)
    assert os.path.exists(db_url.removeprefix("sqlite:///"))
