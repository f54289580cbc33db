"""Runner overhead of a submission: the queue's annotation of N notes against a plain httpx client, in one run.

    python benchmarks/platform_bench.py [--notes 20000] [--concurrency 8] [--db URL]

A fast local tool (a date annotator of one regular expression, served by nlpbench's tool app with
uvicorn in its own process, so that the tool costs little beside the client) annotates N short notes twice:

1. **plain httpx**: one ``httpx.AsyncClient``, at most ``--concurrency`` requests at once, one
   ``POST /api/v1/textDateAnnotations`` per note, bodies parsed as JSON and nothing else;
2. **runner alone**: :class:`~nlpbench.runner.AnnotationRun` over the same notes held in memory, nothing
   stored: what the submission adds on top of it is the platform's own overhead;
3. **submission**: ``nlpbench submit --task date`` of the same dataset and a worker in this process; the
   time is the ``ANNOTATING`` phase (from its event to the ``SCORING`` event): every answer checked
   against the schema and the note, written to annotation store ``submission-<id>`` in fenced batches,
   progress counted, the lease renewed. Validation (warm-up, reproducibility on the subset) and scoring
   are reported apart.

Besides wall times, the CPU time of this process on each side (the client's, and for the submission the
worker's too: its threads included) is printed: on a loaded machine it varies less than the wall time.

The order of the three rotates over ``--repeat`` rounds and medians are printed; the notes live in a fresh SQLite
file (or ``--db``) made by the benchmark.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from nlpbench.annotators import Annotator, ToolInfo
from nlpbench.model import Annotation, Document, Span
from nlpbench.platform import queue as queues
from nlpbench.platform.worker import Worker
from nlpbench.runner.client import RetryPolicy
from nlpbench.runner.run import AnnotationRun
from nlpbench.store import open_store, repository
from nlpbench.store.submissions import Submission

DATE = re.compile(r"\b\d{2}/\d{2}/\d{4}\b")
TEXT = "Seen on {day:02d}/11/2025 by Dr. Prescott; follow-up on March {day}, 2026. Patient {n} is stable."


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class QuickDates(Annotator):
    """Dates of the form MM/DD/YYYY, by one regular expression: a tool that answers at once."""

    info = ToolInfo("quick-dates", "1.0.0", "One regular expression, for the platform benchmark.", "mit")
    types = ("date",)

    def annotate(self, note: Document) -> list[Annotation]:
        return [
            Annotation(note.id, Span(*m.span()), "date", m[0], {"dateFormat": "MM/DD/YYYY"}, 90.0)
            for m in DATE.finditer(note.text or "")
        ]


def serve_tool(port: int) -> None:
    import uvicorn

    from nlpbench.api.tool import create_app

    uvicorn.run(create_app(QuickDates()), host="127.0.0.1", port=port, log_level="warning")


def start_tool() -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [sys.executable, __file__, "--serve-tool", str(port)]
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/v1/healthCheck", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the tool did not start within 60 s")


def make_dataset(store, notes: int) -> list[dict]:
    items = [
        repository.ImportItem(
            f"note-{n:06d}", f"patient-{n % 1000}", "loinc:LP29684-5", TEXT.format(day=n % 28 + 1, n=n)
        )
        for n in range(notes)
    ]
    for name, chosen in (("bench", items), ("bench-subset", items[:10])):
        with store.session() as session:
            repository.create_dataset(session, name)
            repository.import_notes(session, name, chosen)
    return [{"identifier": i.identifier, "text": i.text, "type": i.type, "patientId": i.patient} for i in items]


async def plain(url: str, notes: list[dict], concurrency: int) -> tuple[float, float]:
    slots = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=f"{url}/api/v1", timeout=30, limits=limits) as client:

        async def one(note: dict) -> None:
            async with slots:
                response = await client.post("/textDateAnnotations", json={"note": note})
                response.raise_for_status()
                response.json()

        start, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(note) for note in notes))
        return time.perf_counter() - start, time.process_time() - cpu


def runner_alone(url: str, notes: list[dict], concurrency: int) -> tuple[float, float]:
    documents = [
        Document(n["identifier"], n["text"], metadata={"noteType": n["type"], "patientId": n["patientId"]})
        for n in notes
    ]
    run = AnnotationRun(url, labels=("date",), concurrency=concurrency, retry=RetryPolicy(retries=3))

    async def drain() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        async for _ in run.stream(documents):
            pass
        return time.perf_counter() - start, time.process_time() - cpu

    return asyncio.run(drain())


def through_submission(store, url: str, concurrency: int) -> dict[str, float]:
    queues.configure_queue(store, "bench", concurrency=concurrency, time_budget_seconds=86400.0)
    request = queues.Request(team="bench", task="date", dataset="bench", queue="bench", tool_url=url)
    submission = queues.submit(store, request)
    cpu: dict[str, float] = {}
    start = time.perf_counter()
    Worker(
        store, queue="bench", poll=0.05, on_status=lambda _, status: cpu.setdefault(status, time.process_time())
    ).run(until_idle=True)
    total = time.perf_counter() - start
    with store.session(readonly=True) as session:
        row = session.get(Submission, submission)
        assert row.status == "SCORED", row.reason
        moments = {e.status: e.at for e in queues.events(session, submission)}
    return {
        "annotating": (moments["SCORING"] - moments["ANNOTATING"]).total_seconds(),
        "annotating CPU": cpu["SCORING"] - cpu["ANNOTATING"],
        "validating": (moments["ANNOTATING"] - moments["VALIDATING"]).total_seconds(),
        "scoring": (moments["SCORED"] - moments["SCORING"]).total_seconds(),
        "total": total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--db", default=None, help="an empty database (default: a SQLite file in a temporary folder)")
    parser.add_argument("--serve-tool", type=int, default=None, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve_tool is not None:
        return serve_tool(arguments.serve_tool)
    process, url = start_tool()
    try:
        with tempfile.TemporaryDirectory() as scratch:
            store = open_store(arguments.db or f"sqlite:///{Path(scratch) / 'bench.db'}")
            notes = make_dataset(store, arguments.notes)
            plains, runners, runs = [], [], []
            sides = [
                lambda: plains.append(asyncio.run(plain(url, notes, arguments.concurrency))),
                lambda: runners.append(runner_alone(url, notes, arguments.concurrency)),
                lambda: runs.append(through_submission(store, url, arguments.concurrency)),
            ]
            for round_ in range(arguments.repeat):
                for side in sides[round_ % 3 :] + sides[: round_ % 3]:
                    side()
            store.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
    base = statistics.median(wall for wall, _ in plains)
    runner = statistics.median(wall for wall, _ in runners)
    annotating = statistics.median(r["annotating"] for r in runs)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"notes: {arguments.notes}, concurrency {arguments.concurrency}, rounds {arguments.repeat}")
    print(f"plain httpx client:        {base:8.2f} s  ({arguments.notes / base:7.0f} notes/s)")
    print(
        f"runner alone:              {runner:8.2f} s  ({arguments.notes / runner:7.0f} notes/s)  "
        f"over plain {100 * (runner / base - 1):+.1f} %"
    )
    print(
        f"submission, annotating:    {annotating:8.2f} s  ({arguments.notes / annotating:7.0f} notes/s)  "
        f"over plain {100 * (annotating / base - 1):+.1f} %, over the runner {100 * (annotating / runner - 1):+.1f} %"
    )
    print(
        "each side, every round (s): "
        f"plain {[round(wall, 2) for wall, _ in plains]}, runner {[round(wall, 2) for wall, _ in runners]}, "
        f"submission {[round(r['annotating'], 2) for r in runs]}"
    )
    cpus = [statistics.median(cpu for _, cpu in plains), statistics.median(cpu for _, cpu in runners)]
    cpus.append(statistics.median(r["annotating CPU"] for r in runs))
    print(
        f"CPU of this process (medians, s): plain {cpus[0]:.2f}, runner {cpus[1]:.2f}, "
        f"submission annotating {cpus[2]:.2f} (over the runner {100 * (cpus[2] / cpus[1] - 1):+.1f} %)"
    )
    for phase in ("validating", "scoring", "total"):
        print(f"submission, {phase + ':':<14} {statistics.median(r[phase] for r in runs):8.2f} s")


if __name__ == "__main__":
    main()
