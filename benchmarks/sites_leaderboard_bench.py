"""The pooled leaderboard of data sites: seeding through the centre's own path, then the pages' time.

    python benchmarks/sites_leaderboard_bench.py [--sites 3] [--submissions 50] [--notes 2000] [--task date]

Each of ``--sites`` sites has ``--notes`` synthetic notes of its own (seeded per site); ``--variants``
prediction files per site (each dropping a different share of the gold) are scored once with ``score sandbox``,
as a site's worker scores them, and made into what a site sends (documents renamed ``d1``, ``d2``, …; the
site's own closed form, :func:`nlpbench.platform.sites.checked_reports`). A fresh SQLite centre registers the
sites; each of ``--submissions`` submissions (a command, one team each) is taken by every site
(:func:`nlpbench.platform.sites.next_run`) and given its counts (:func:`nlpbench.platform.sites.receive`: the
site's own intervals, then, from the last site, the pooled result with its interval stratified by site and the
task's rank groups). Seeding time includes all of it.

Then, through the leaderboard app (httpx's ASGI transport, no network): ``GET /tasks/TASK`` (the pooled
columns, a column per site, the forest plot), ``GET /submissions/N`` (its sites' table) and ``GET /``, each
``--repeat`` times after a first request (median and worst printed). The goal is a page under 300 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select

from nlpbench import formats
from nlpbench.platform import queue, sites
from nlpbench.store import Store, open_store
from nlpbench.store.sites import Site
from nlpbench.synth import generate
from nlpbench.tasks.sandbox import score_sandbox
from nlpbench.web.app import create_app
from predictions import thinned


def site_reports(root: Path, site: int, notes: int, variants: int, task: str) -> list[dict[str, Any]]:
    """What site ``site`` sends for each of ``variants`` prediction files of its own notes."""
    documents = list(generate(notes, seed=100 + site))
    sandbox = formats.get("sandbox")
    gold = root / f"gold-{site}.json"
    sandbox.write(documents, gold)
    types = ["date"] if task == "date" else ["contact", "date", "id", "location", "person_name"]
    found = []
    for variant in range(variants):
        kept = thinned(documents, variant + 2)
        pred = root / f"pred-{site}-{variant}.json"
        sandbox.write(kept, pred)
        reports = {}
        for annotation_type in types:
            report = score_sandbox(gold, pred, annotation_type)
            names: dict[str, str] = {}
            per_document = [
                {**row, "document": names.setdefault(row["document"], f"d{len(names) + 1}")}
                for row in report.per_document
            ]
            overall = [row for row in report.scores if row.get("label") is None and row.get("average") is None]
            reports[annotation_type] = {"scores": overall, "perDocument": per_document}
        found.append(sites.checked_reports(reports, task))
    return found


def seed(store: Store, root: Path, count: int, submissions: int, notes: int, variants: int, task: str) -> None:
    """``submissions`` submissions of ``task``, each run at ``count`` sites and pooled by the centre."""
    by_site = {f"site-{s}": site_reports(root, s, notes, variants, task) for s in range(count)}
    ids = {}
    with store.session() as session:
        for name in by_site:
            sites.add_site(session, name, ["bench"])
            ids[name] = session.scalars(select(Site.id).where(Site.name == name)).one()
    for n in range(submissions):
        request = queue.Request(team=f"team-{n:03d}", task=task, dataset="bench", command=f"./tool --variant {n}")
        queue.submit(store, request)
        for name, reports in by_site.items():
            job = sites.next_run(store, ids[name])
            assert job is not None
            returned = sites.Returned("SCORED", f"{ids[name]:064x}", notes, "bench", reports[n % variants],
                                      {"name": f"tool-{n:03d}", "version": "1.0"})  # fmt: skip
            sites.receive(store, ids[name], job.run, returned)


def timed(client: TestClient, path: str, repeat: int) -> tuple[float, float, float]:
    """The first request's time, then the median and the worst of ``repeat`` more, in milliseconds."""
    times = []
    for _ in range(repeat + 1):
        started = time.perf_counter()
        answer = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 200, (path, answer.status_code)
    return times[0], statistics.median(times[1:]), max(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=3)
    parser.add_argument("--submissions", type=int, default=50)
    parser.add_argument("--notes", type=int, default=2000, help="Notes at each site.")
    parser.add_argument("--variants", type=int, default=5)
    parser.add_argument("--task", choices=("date", "phi"), default="date")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="nlpbench-sites-") as scratch:
        store = open_store(f"sqlite:///{scratch}/centre.db")
        started = time.perf_counter()
        seed(store, Path(scratch), args.sites, args.submissions, args.notes, args.variants, args.task)
        seeded = time.perf_counter() - started
        with TestClient(create_app(store)) as client:
            pages = {path: timed(client, path, args.repeat) for path in (f"/tasks/{args.task}", "/submissions/1", "/")}
        store.close()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average at the end {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"{args.submissions} submissions of task {args.task}, each run at {args.sites} sites of {args.notes} notes; "
          f"seeded in {seeded:.1f} s ({seeded / args.submissions:.2f} s a submission: the sites' intervals, "
          "the pooled one, the rank groups)")  # fmt: skip
    for path, (first, median, worst) in pages.items():
        print(f"GET {path}: first {first:.0f} ms, then median {median:.0f} ms, worst {worst:.0f} ms over {args.repeat}")


if __name__ == "__main__":
    main()
