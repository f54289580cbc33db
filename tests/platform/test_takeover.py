"""``kill -9`` of a worker in the middle of a submission: another worker takes over once the lease expires.

Real processes (``nlpbench worker`` in a subprocess) against the test tool in this process, on both backends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from nlpbench.store import open_store, repository
from nlpbench.store.submissions import Submission

LEASE = "1.5"


def worker(db_url: str, name: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "nlpbench", "worker", "--db", db_url, "--until-idle", "--poll", "0.1"]
    return subprocess.Popen([*command, "--lease", LEASE, "--name", name], stderr=subprocess.PIPE, text=True)


def progress(opened, submission: int) -> tuple[str, int]:
    with opened.session(readonly=True) as session:
        row = session.get(Submission, submission)
        return row.status, row.notes_done


def test_a_worker_killed_mid_run_is_taken_over_from_the_stored_checkpoint(nb, dataset, tool, db_url):
    assert nb("submissions", "queue", "default", "--concurrency", "1").exit_code == 0
    submission = int(nb("submit", "--team", "t", "--task", "date", "--dataset", "notes", "--tool", tool.url).stdout)
    tool.reset(delay=0.3, notes=None)
    opened = open_store(db_url)
    first = worker(db_url, "first")
    deadline = time.monotonic() + 60
    while (state := progress(opened, submission))[0] != "ANNOTATING" or state[1] < 3:
        assert time.monotonic() < deadline and first.poll() is None, "the first worker never got going"
        time.sleep(0.1)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    _, done_when_killed = progress(opened, submission)
    seen_before = list(tool.seen)
    second = worker(db_url, "second")
    try:
        _, err = second.communicate(timeout=120)
    finally:
        second.kill()
    assert second.returncode == 0, err
    data = json.loads(nb("submissions", "show", str(submission), "--format", "json").stdout)
    assert data["status"] == "SCORED", data["reason"]
    assert data["attempts"] == 2
    assert data["progress"] == {"done": len(dataset), "total": len(dataset)}
    reasons = [e["reason"] for e in data["events"]]
    assert "taken over by worker second: the lease of first expired" in reasons
    assert [e["status"] for e in data["events"]].count("SCORED") == 1 and len(data["results"]) == 1
    # the stored notes were not sent again: the second worker asked for the rest only (and the runner's probe note)
    resumed = [note for note in tool.seen[len(seen_before) :] if note in dataset]
    assert 3 <= done_when_killed < len(dataset)
    assert resumed == dataset[done_when_killed:]
    with opened.session(readonly=True) as session:
        records = [r.note_identifier for r in repository.iter_records(session, "notes", f"submission-{submission}")]
    opened.close()
    assert sorted(records) == sorted(dataset)  # each note once, none lost
