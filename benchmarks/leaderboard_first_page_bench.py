"""From a submission becoming SCORED to the first leaderboard page that shows its rank group, before and after.

    python benchmarks/leaderboard_first_page_bench.py [--submissions 8] [--notes 2000]

A fresh SQLite store gets a synthetic dataset of ``--notes`` notes and ``--submissions`` prediction files
of task ``date`` (each keeping a different share of the gold dates, one team each), submitted with
:func:`nlpbench.platform.queue.submit`. A :class:`~nlpbench.platform.worker.Worker` scores all but the
last (each result stored with its intervals and the column's rank groups); the last is then submitted and
run by a worker, timed (and the part of its SCORING transaction that ranks the column).

- **after** (the worker stores the rank groups with the result): from the worker's SCORED (its commit) to
  the first ``GET /tasks/date`` of a new app (httpx's ASGI transport) answering with every rank.
- **before** (main's behaviour: the page's server computes them in its background refresh): the stored
  groups are deleted, and the time is that of :func:`nlpbench.platform.ranks.refresh` — the same
  computation ``leaderboard serve`` ran after a new result — then the first GET. (The server also
  waited up to its ``--refresh`` period, 10 s by default, before starting it: not counted.)
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import delete

from nlpbench import formats
from nlpbench.cli.dataset import import_documents
from nlpbench.platform import queue, ranks
from nlpbench.platform import worker as workers
from nlpbench.store import Store, open_store
from nlpbench.store.ranks import RankGroups
from nlpbench.store.submissions import SCORED
from nlpbench.synth import generate
from nlpbench.web.app import create_app
from predictions import thinned

START = datetime(2026, 1, 1, tzinfo=UTC)
DATASET = "bench"


def prepared(store: Store, root: Path, submissions: int, notes: int) -> list[queue.Request]:
    """The dataset, and ``submissions`` requests of task ``date``: team ``team-N`` keeps the dates whose index
    modulo N+2 is not 0."""
    documents = list(generate(notes, seed=3))
    import_documents(store, DATASET, documents, "synth")
    sandbox = formats.get("sandbox")
    requests = []
    for n in range(submissions):
        kept = thinned(documents, n + 2)
        path = root / f"pred-{n}.json"
        sandbox.write(kept, path)
        text = path.read_text()
        requests.append(
            queue.Request(team=f"team-{n}", task="date", dataset=DATASET, predictions=text, predictions_name=path.name)
        )
    return requests


def first_ranked_page(store: Store) -> float:
    """Seconds to the first ``GET /tasks/date`` of a new app; it must show every line's rank."""
    started = time.perf_counter()
    with TestClient(create_app(store)) as client:
        rows = client.get("/tasks/date.json").json()
    spent = time.perf_counter() - started
    assert rows and all(row[f"{DATASET} rank"] is not None for row in rows), "a rank is missing"
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=8)
    parser.add_argument("--notes", type=int, default=2000)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # the synthetic notes' age and profession have no NLP Sandbox array
    with tempfile.TemporaryDirectory(prefix="nlpbench-lb1-") as scratch:
        store = open_store(f"sqlite:///{scratch}/bench.db")
        started = time.perf_counter()
        *earlier, last = prepared(store, Path(scratch), args.submissions, args.notes)
        for n, request in enumerate(earlier):
            queue.submit(store, request, moment=START + timedelta(days=n))
        workers.Worker(store, poll=0.05, lease=600).run(until_idle=True)
        seeded = time.perf_counter() - started

        ranking: list[float] = []
        rank = ranks.rank

        def timed_rank(*rank_args, **rank_kwargs) -> int:
            began = time.perf_counter()
            try:
                return rank(*rank_args, **rank_kwargs)
            finally:
                ranking.append(time.perf_counter() - began)

        ranks.rank = timed_rank  # type: ignore[assignment]  # the worker's call, timed
        scored_at: list[float] = []
        queue.submit(store, last, moment=START + timedelta(days=len(earlier)))
        begun = time.perf_counter()
        on_status = lambda _id, status: scored_at.append(time.perf_counter()) if status == SCORED else None  # noqa: E731
        workers.Worker(store, poll=0.05, lease=600, on_status=on_status).run(until_idle=True)
        worked = scored_at[0] - begun
        ranks.rank = rank  # type: ignore[assignment]
        after = first_ranked_page(store)

        with store.session() as session:
            session.execute(delete(RankGroups))
        started = time.perf_counter()
        refreshed = ranks.refresh(store)
        refreshing = time.perf_counter() - started
        before = refreshing + first_ranked_page(store)
        assert refreshed.columns == 1
        store.close()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"{args.submissions} submissions of task date, {args.notes} notes each; the first "
          f"{args.submissions - 1} scored and ranked in {seeded:.1f} s")  # fmt: skip
    print(f"the last one run by a worker: {worked:.1f} s to SCORED, of which ranking the column {ranking[0]:.2f} s")
    print(f"SCORED to the first page showing ranks, before (server's refresh + GET): {before:.2f} s "
          f"(refresh {refreshing:.2f} s)")  # fmt: skip
    print(f"SCORED to the first page showing ranks, after (ranks stored by the worker, GET only): {after:.2f} s")


if __name__ == "__main__":
    main()
