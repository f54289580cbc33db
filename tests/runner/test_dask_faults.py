"""The Dask executor when workers die: a real scheduler and worker processes on 127.0.0.1, ``annotate`` as run by users.

A worker process is killed (SIGKILL, no nanny to bring it back) while it sends
its batch to a slow tool: with another worker alive the batch runs there and
the output equals a local run's; with none left the run stops with one line
within a bounded time, and the notes finished before stay in the checkpoint.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nlpbench import formats
from nlpbench.api.tool import create_app
from nlpbench.model import Document
from tests.toolkit import RegexPhi, served

distributed = pytest.importorskip("distributed")

NOTES = 12
RUN_TIMEOUT = 180  # a hang fails the test instead of blocking the suite


class Slow(RegexPhi):
    """Takes ``DELAY`` s per request and counts them (served without a cache: each request is a call)."""

    DELAY = 0.1
    calls = 0
    lock = threading.Lock()

    def annotate(self, note):
        with Slow.lock:
            Slow.calls += 1
        time.sleep(Slow.DELAY)
        return super().annotate(note)


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """A ``dask scheduler`` process on 127.0.0.1; yields its address file."""
    path = tmp_path_factory.mktemp("dask") / "scheduler.json"
    process = start_scheduler(path)
    yield path
    stop(process)


#: No dashboard, and the HTTP server every scheduler and worker still starts on 127.0.0.1 and a free port (by
#: default it takes 8787, or the next free one, on every interface)
NO_DASHBOARD = ("--no-dashboard", "--dashboard-address", "127.0.0.1:0")


def start_scheduler(path: Path, **config: str) -> subprocess.Popen:
    """A scheduler writing its address to ``path``; ``config`` is Dask configuration (environment variables)."""
    command = ["-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", *NO_DASHBOARD]
    process = spawn([*command, "--scheduler-file", str(path)], config)
    deadline = time.monotonic() + 60
    while not path.exists() or not path.read_text().strip():
        assert process.poll() is None and time.monotonic() < deadline, "the scheduler did not start"
        time.sleep(0.2)
    return process


def start_worker(path: Path) -> subprocess.Popen:
    command = ["-m", "distributed.cli.dask_worker", "--scheduler-file", str(path), "--no-nanny"]
    return spawn([*command, "--nthreads", "1", "--host", "127.0.0.1", *NO_DASHBOARD])


def wait_for_workers(path: Path, n: int) -> None:
    with distributed.Client(scheduler_file=str(path), timeout=60) as client:
        client.wait_for_workers(n, timeout=60)


def spawn(arguments: list[str], environment: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(environment or {})},
    )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)


@pytest.fixture
def workers(scheduler):
    """Start ``n`` worker processes without nannies; all are killed after the test."""
    started: list[subprocess.Popen] = []

    def start(n: int) -> list[subprocess.Popen]:
        started.extend(start_worker(scheduler) for _ in range(n))
        wait_for_workers(scheduler, n)
        return started[-n:]

    yield start
    for process in started:
        stop(process)


@pytest.fixture
def bundles(tmp_path) -> Path:
    texts = [f"Note {i}: seen on {1 + i % 12}/{1 + i}/2020 by Dr. Prescott in Seattle." for i in range(NOTES)]
    documents = [Document(f"note-{i}", text, metadata={"patientId": "p-1"}) for i, text in enumerate(texts)]
    path = tmp_path / "notes.json"
    formats.get("sandbox-bundles").write(documents, path)
    return path


def annotate(*arguments: str | Path) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    command = [sys.executable, "-m", "nlpbench", "annotate", *map(str, arguments)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT, env={**os.environ})
    return result, time.monotonic() - started


def kill_when_busy(process: subprocess.Popen, calls: int) -> threading.Thread:
    """SIGKILL ``process`` once the tool has had ``calls`` requests."""

    def wait_and_kill() -> None:
        deadline = time.monotonic() + RUN_TIMEOUT
        while Slow.calls < calls and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)

    thread = threading.Thread(target=wait_and_kill, daemon=True)
    thread.start()
    return thread


def address(scheduler: Path) -> str:
    return json.loads(scheduler.read_text())["address"]


def test_a_batch_whose_worker_dies_runs_on_another_worker(scheduler, workers, bundles, tmp_path):
    doomed, _survivor = workers(2)
    Slow.calls = 0
    with served(create_app(RegexPhi())) as url:
        local, _ = annotate("--tool", url, "--notes", bundles, "--out", tmp_path / "local.json")
    assert local.returncode == 0, local.stderr
    with served(create_app(Slow(), cache_bytes=0)) as url:
        killer = kill_when_busy(doomed, calls=8)
        on_dask = ("--executor", "dask", "--scheduler", address(scheduler), "--batch-size", "2", "--concurrency", "1")
        result, _ = annotate("--tool", url, "--notes", bundles, "--out", tmp_path / "dask.json", *on_dask)
        killer.join(timeout=10)
    assert doomed.wait(timeout=10) == -signal.SIGKILL
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "dask.json").read_text() == (tmp_path / "local.json").read_text()
    # five types for the probe and each note, and again whatever the dead worker had sent (under load it may
    # have died before it sent anything: the survivor took the first batches)
    assert Slow.calls >= 5 * (1 + NOTES)


def test_with_no_worker_left_the_run_stops_with_one_line(scheduler, workers, bundles, tmp_path):
    (only,) = workers(1)
    Slow.calls = 0
    out = tmp_path / "dask.json"
    with served(create_app(Slow(), cache_bytes=0)) as url:
        killer = kill_when_busy(only, calls=8)
        on_dask = ("--executor", "dask", "--scheduler", address(scheduler), "--batch-size", "2", "--timeout", "3")
        result, _ = annotate("--tool", url, "--notes", bundles, "--out", out, *on_dask)
        killer.join(timeout=10)
    assert only.wait(timeout=10) == -signal.SIGKILL
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(f"nlpbench: error: Dask executor: the Dask scheduler at {address(scheduler)} ")
    assert "has had no worker for 3 s; the batches in flight cannot run" in lines[0]
    kept = out.with_name(out.name + ".checkpoint.jsonl")
    assert kept.exists() and not out.exists()


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("garbage", "--scheduler 'garbage' is not a Dask scheduler address such as tcp://HOST:8786: "),
        ("ftp://127.0.0.1:8786", "--scheduler 'ftp://127.0.0.1:8786' is not a Dask scheduler address "),
        ("tcp://127.0.0.1:notaport", "--scheduler 'tcp://127.0.0.1:notaport' is not a Dask scheduler address "),
        ("tcp://no-such-host.invalid:8786", "cannot reach the Dask scheduler at tcp://no-such-host.invalid:8786: "),
    ],
)
def test_a_scheduler_address_that_is_not_one_is_one_line(cli, bundles, tmp_path, given, said):
    with served(create_app(RegexPhi())) as url:
        arguments = ("--tool", url, "--notes", bundles, "--out", tmp_path / "out.json")
        result = cli("annotate", *arguments, "--executor", "dask", "--scheduler", given)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"nlpbench: error: {said}"), lines


@pytest.fixture
def own_cluster(tmp_path):
    """A scheduler (with Dask configuration) and workers of the test's own; all are killed after the test."""
    started: list[subprocess.Popen] = []

    def start(workers: int, **config: str) -> tuple[Path, subprocess.Popen, list[subprocess.Popen]]:
        path = tmp_path / "scheduler.json"
        started.append(start_scheduler(path, **config))
        started.extend(start_worker(path) for _ in range(workers))
        wait_for_workers(path, workers)
        return path, started[0], started[1:]

    yield start
    for process in started:
        stop(process)


def test_a_scheduler_that_dies_stops_the_run_with_one_line(own_cluster, tmp_path, bundles):
    path, doomed, _workers = own_cluster(1)
    Slow.calls = 0
    with served(create_app(Slow(), cache_bytes=0)) as url:
        killer = kill_when_busy(doomed, calls=8)
        on_dask = ("--executor", "dask", "--scheduler", address(path), "--batch-size", "2", "--timeout", "3")
        result, _ = annotate("--tool", url, "--notes", bundles, "--out", tmp_path / "out.json", *on_dask)
        killer.join(timeout=10)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("nlpbench: error: Dask executor: ")
    assert f"the Dask scheduler at {address(path)}" in lines[0] and "; the batches in flight cannot run" in lines[0]


def test_a_batch_that_kills_its_workers_stops_the_run_with_one_line(own_cluster, tmp_path, bundles):
    """Dask gives up on a task after ``allowed-failures`` worker deaths (here none allowed): one line. The cluster's
    one worker is the one killed, so it holds a batch when it dies: with a second worker, every batch in flight
    could be on the other one, and the kill lost nothing (a loaded round ran all the notes)."""
    path, _scheduler, (doomed,) = own_cluster(1, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0")
    Slow.calls = 0
    with served(create_app(Slow(), cache_bytes=0)) as url:
        killer = kill_when_busy(doomed, calls=8)
        on_dask = ("--executor", "dask", "--scheduler", address(path), "--batch-size", "2")
        result, _ = annotate("--tool", url, "--notes", bundles, "--out", tmp_path / "out.json", *on_dask)
        killer.join(timeout=10)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    expected = (
        "nlpbench: error: Dask executor: Dask gave up a batch whose worker died (0 retries allowed, last worker tcp://"
    )
    assert lines[0].startswith(expected)
