"""Serving a task page of the leaderboard with N scored submissions: seeding (intervals stored), first and warm request.

    python benchmarks/leaderboard_bench.py [--submissions 1000] [--teams 50] [--notes 40] [--repeat 7]

A fresh SQLite store gets a synthetic dataset of ``--notes`` notes; ``--variants`` prediction files
(each dropping a different share of the gold dates) are scored once with ``score sandbox``, and the N
submissions of task ``date`` (``--teams`` teams, one prediction file each, dates a day apart) are made
with :func:`nlpbench.platform.queue.submit` and given their result with the platform's own
:func:`nlpbench.platform.scoring.store_result` (what a worker and ``nlpbench rescore`` write after
scoring, each result's bootstrap intervals included), moved to SCORED; the seeding time includes them.
The rank groups are then computed once, for the final set of results (:func:`nlpbench.platform.ranks.refresh`,
timed apart), not after each result as a worker does: the page's time is the point, and it reads the groups
whichever transaction stored them.

Then ``GET /tasks/date`` through the app (httpx's ASGI transport, no network): the first request of a new
app, then ``--repeat`` more (median and worst printed); each reads the stored intervals and rank groups and
computes neither. The goal is a page under 300 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from nlpbench import formats
from nlpbench.cli.dataset import import_documents
from nlpbench.platform import queue, ranks
from nlpbench.platform.scoring import Scored, store_result
from nlpbench.store import Store, open_store
from nlpbench.store.submissions import SCORED, Submission
from nlpbench.synth import generate
from nlpbench.tasks.sandbox import score_sandbox
from nlpbench.web.app import create_app
from predictions import thinned

START = datetime(2026, 1, 1, tzinfo=UTC)


def seed(store: Store, root: Path, submissions: int, teams: int, notes: int, variants: int) -> None:
    """``submissions`` scored submissions of task ``date`` by ``teams`` teams, from ``variants`` scored files."""
    documents = list(generate(notes, seed=3))
    import_documents(store, "bench", documents, "synth")
    sandbox = formats.get("sandbox")
    gold = root / "gold.json"
    sandbox.write(documents, gold)
    scored_files: list[tuple[str, Scored]] = []
    for variant in range(variants):
        kept = thinned(documents, variant + 2)
        pred = root / f"pred-{variant}.json"
        sandbox.write(kept, pred)
        scored = Scored()
        scored.add("date", score_sandbox(gold, pred, "date"))
        scored_files.append((pred.read_text(), scored))
    for n in range(submissions):
        text, scored = scored_files[n % variants]
        team = f"team-{n % teams:03d}"
        request = queue.Request(team=team, task="date", dataset="bench", predictions=text, predictions_name="p.json")
        submission_id = queue.submit(store, request, moment=START + timedelta(days=n))
        with store.session() as session:
            submission = session.get(Submission, submission_id)
            store_result(session, submission, "standard", scored)
            queue.move(session, submission, SCORED, "scored by the benchmark")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--teams", type=int, default=50)
    parser.add_argument("--notes", type=int, default=40)
    parser.add_argument("--variants", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="nlpbench-lb-") as scratch:
        store = open_store(f"sqlite:///{scratch}/bench.db")
        started = time.perf_counter()
        seed(store, Path(scratch), args.submissions, args.teams, args.notes, args.variants)
        seeded = time.perf_counter() - started
        started = time.perf_counter()
        ranked = ranks.refresh(store).columns
        ranking = time.perf_counter() - started
        client = TestClient(create_app(store))
        started = time.perf_counter()
        assert client.get("/tasks/date").status_code == 200
        cold = time.perf_counter() - started
        warm = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            page = client.get("/tasks/date")
            warm.append(time.perf_counter() - started)
            assert page.status_code == 200
        store.close()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average at the end {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"{args.submissions} submissions of {args.teams} teams, {args.notes} notes each; seeded in {seeded:.1f} s "
          f"({seeded / args.submissions * 1000:.0f} ms a result, intervals included)")  # fmt: skip
    print(f"rank groups of the final results computed once: {ranked} columns in {ranking:.1f} s")
    print(f"GET /tasks/date first (a new app; stored intervals and rank groups read): {cold * 1000:.0f} ms")
    print(f"GET /tasks/date warm: median {statistics.median(warm) * 1000:.0f} ms, worst {max(warm) * 1000:.0f} ms "
          f"over {args.repeat}")  # fmt: skip


if __name__ == "__main__":
    main()
