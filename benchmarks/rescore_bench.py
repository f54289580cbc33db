"""The platform's scoring of a stored submission against the command line's scoring of the same files, in one run.

    python benchmarks/rescore_bench.py [--notes 5000] [--repeat 3] [--profile standard] [--baseline TREE]
                                       [--folder DIR]

``--baseline TREE``: a source tree (``TREE/src``) whose ``rescore`` is timed in the same turns (the code before a
change); ``--folder DIR``: the store and the exported files are kept there and reused by a later run.

A fresh SQLite store gets N synthetic notes with gold (``nlpbench synth --into-store``); predictions made from
the gold (every 7th annotation dropped, every 5th moved one character later) are submitted for task ``phi``
(``nlpbench submit``) and stored in bulk as the worker stores them, the submission marked scored (:func:`seed`:
no worker pass, whose scoring is what ``rescore`` times). The gold and the stored predictions are then exported
as NLP Sandbox JSON (``nlpbench dataset export``), and two commands are timed, in turns, each in its own process:

1. **rescore**: ``nlpbench rescore ID --profile P``: the five PHI types scored from the store, the per-document
   rows and the bootstrap intervals (2,000 resamples of every reported value) stored;
2. **score -t all**: ``nlpbench score sandbox -t all --per-document`` on the exported files, the JSON report
   written to a file (no intervals: the command computes none unless asked).

Before each ``rescore`` run the store's rank groups are deleted (:func:`unranked`): the rescored result takes the
id of the one it replaces (SQLite reuses the largest id), whose groups a column would otherwise keep, so that every
run ranks its result as the worker ranks a newly scored one (:func:`nlpbench.platform.ranks.rank`).

Wall time, CPU time (user + system) and peak resident memory (``ru_maxrss``) of the child, from ``wait4``, per
run; medians of ``--repeat`` rounds, the order alternating (on a loaded machine the CPU ratio is the steadier).
Before timing, the stored result's scores and per-document rows are compared with the command's report, every
number: a difference is printed and the benchmark exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Table, select

from nlpbench.platform import queue
from nlpbench.platform.scoring import predictions_store
from nlpbench.store import open_store, repository
from nlpbench.store.models import AnnotationRecord
from nlpbench.store.submissions import SCORED, Result, ResultDocument

NLPBENCH = [sys.executable, "-m", "nlpbench"]
#: The largest file ``nlpbench submit`` takes (64 MiB): a larger one (100,000 notes) has its first record
#: submitted and every record seeded, as a tool's run stores its predictions without a submitted file.
SUBMITTED_BYTES = 64 * 2**20


def nlpbench(*args: str | int) -> str:
    """Run ``nlpbench ARGS…``; its standard output (a failure stops the benchmark with its error)."""
    done = subprocess.run([*NLPBENCH, *map(str, args)], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"nlpbench {' '.join(map(str, args))} failed:\n{done.stderr}")
    return done.stdout


def predictions(gold: Path, out: Path) -> None:
    """The gold's records with every 7th annotation dropped and every 5th (of those kept) one character shorter
    at its start: true positives, misses and partial matches for every metric."""
    records = json.loads(gold.read_text(encoding="utf-8"))
    seen = 0
    for record in records:
        for key, listed in record.items():
            if not key.endswith("Annotations"):
                continue
            kept = []
            for annotation in listed:
                seen += 1
                if seen % 7 == 0:
                    continue
                if seen % 5 == 0 and annotation["length"] > 1:
                    annotation = {
                        **annotation,
                        "start": annotation["start"] + 1,
                        "length": annotation["length"] - 1,
                        "text": annotation["text"][1:],
                    }
                kept.append(annotation)
            record[key] = kept
    out.write_text(json.dumps(records), encoding="utf-8")


def seed(url: str, submission: int, dataset: str, submitted: Path) -> None:
    """Store the submitted records as the submission's predictions (one Core insert per 5,000, as the worker's
    ``_insert_records`` does) and mark it scored: what ``rescore`` reads, without a worker pass over each note."""
    prefix = f"datasets/{dataset}/fhirStores/{repository.EVALUATION}/fhir/Note/"
    store = open_store(url)
    try:
        with store.session() as session:
            found = queue.get(session, submission)
            store_id = repository.create_annotation_store(session, dataset, predictions_store(submission)).id
            rows = []
            for record in json.loads(submitted.read_text(encoding="utf-8")):
                note = record["annotationSource"]["resourceSource"]["name"].rsplit("/", 1)[-1]
                arrays = {key: value for key, value in record.items() if key.startswith("text")}
                rows.append(
                    {"annotation_store_id": store_id, "identifier": note, "source": prefix + note,
                     "note_identifier": note, "arrays": arrays}
                )  # fmt: skip
            table = cast(Table, AnnotationRecord.__table__)
            for start in range(0, len(rows), 5000):
                session.execute(table.insert(), rows[start : start + 5000])
            queue.move(session, found, SCORED, "seeded by the benchmark")
    finally:
        store.close()


def unranked(folder: Path) -> None:
    """Delete the rank groups of the store ``folder/bench.db`` (with :mod:`sqlite3`: this process stays small)."""
    with sqlite3.connect(folder / "bench.db") as connection:
        connection.execute("DELETE FROM rank_groups")
    connection.close()


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak resident MiB of ``command`` run as a child process (environment ``env``)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{child.stderr.read().decode() if child.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def stored(url: str, submission: int, profile: str) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The submission's stored result under ``profile``: its scores and its per-document rows per type."""
    store = open_store(url)
    try:
        with store.session(readonly=True) as session:
            query = select(Result).where(Result.submission_id == submission, Result.profile == profile)
            result = session.scalars(query).one()
            rows: dict[str, list[dict[str, Any]]] = {}
            found = select(ResultDocument).where(ResultDocument.result_id == result.id).order_by(ResultDocument.id)
            for row in session.scalars(found):
                rows.setdefault(row.annotation_type, []).append(
                    {"document": row.document, "metric": row.metric, **row.counts}
                )
            return dict(result.scores), rows
    finally:
        store.close()


def by_type(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """A several-type report's rows per annotation type, without the field that names it."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["annotation_type"], []).append({k: v for k, v in row.items() if k != "annotation_type"})
    return grouped


def differences(url: str, submission: int, profile: str, report: dict[str, Any]) -> list[str]:
    """Where the stored result and the command's report differ (nothing when every number agrees)."""
    scores, rows = stored(url, submission, profile)
    wanted_scores, wanted_rows = by_type(report["scores"]), by_type(report["per_document"])
    found = []
    for kind in sorted(set(scores) | set(wanted_scores)):
        if scores.get(kind) != wanted_scores.get(kind):
            found.append(f"{kind}: score rows differ")
        if rows.get(kind, []) != wanted_rows.get(kind, []):
            found.append(f"{kind}: per-document rows differ")
    return found


def prepare(folder: Path, notes: int) -> int:
    """Seed the store ``folder/bench.db`` and export ``gold.json`` and ``pred.json`` beside it (kept from an earlier
    run with the same folder); the submission's id."""
    url = f"sqlite:///{folder / 'bench.db'}"
    if (folder / "submission").exists():
        return int((folder / "submission").read_text())
    made = time.perf_counter()
    nlpbench("synth", "--notes", notes, "--seed", 1, "--into-store", "notes", "--db", url)
    gold = folder / "gold.json"
    nlpbench("dataset", "export", "notes", gold, "--format", "sandbox", "--db", url)
    predictions(gold, folder / "submitted.json")
    submitted = folder / "submitted.json"
    if submitted.stat().st_size > SUBMITTED_BYTES:  # too large to submit: its first record submitted, all seeded
        submitted = folder / "submitted-first.json"
        submitted.write_text(json.dumps(json.loads((folder / "submitted.json").read_text())[:1]), encoding="utf-8")
    submission = int(
        nlpbench(
            "submit", "--team", "bench", "--task", "phi", "--dataset", "notes", "--predictions", submitted,
            "--db", url,
        )
    )  # fmt: skip
    seed(url, submission, "notes", folder / "submitted.json")
    store_name = predictions_store(submission)
    nlpbench(
        "dataset", "export", "notes", folder / "pred.json", "--format", "sandbox", "--annotation-store", store_name,
        "--db", url,
    )  # fmt: skip
    (folder / "submission").write_text(str(submission))
    print(f"{notes} notes stored, submission {submission} seeded: {time.perf_counter() - made:.1f} s")
    return submission


def step(name: str, folder: Path, notes: int, profile: str) -> int:
    """Run this benchmark's step ``name`` (``prepare``, ``compare``) in a process of its own; its exit status.

    The timing process stays small: Linux counts a child's peak resident memory from the memory of the process it
    was started from (``exec`` keeps that process's peak as the child's), so the set-up's and the comparison's
    memory would be every command's floor if this process held them."""
    command = [sys.executable, __file__, "--step", name, "--folder", str(folder), "--notes", str(notes)]
    return subprocess.run([*command, "--profile", profile]).returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--baseline", type=Path, help="a source tree (its src/) whose rescore is timed as well")
    parser.add_argument("--folder", type=Path, help="keep the store and files here, reused when there already")
    parser.add_argument("--step", choices=["prepare", "compare"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:  # in a process of its own: see step()
        folder, url = args.folder, f"sqlite:///{args.folder / 'bench.db'}"
        if args.step == "prepare":
            prepare(folder, args.notes)
            return
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        differ = differences(url, int((folder / "submission").read_text()), args.profile, report)
        for line in differ:
            print(f"DIFFER {line}")
        sys.exit(1 if differ else 0)
    with tempfile.TemporaryDirectory(prefix="rescore-bench-") as scratch:
        folder = args.folder or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        if step("prepare", folder, args.notes, args.profile):
            sys.exit("set-up failed")
        submission = int((folder / "submission").read_text())
        url = f"sqlite:///{folder / 'bench.db'}"
        rescore = [*NLPBENCH, "rescore", str(submission), "--profile", args.profile, "--db", url]
        out = folder / "report.json"
        score = [*NLPBENCH, "score", "sandbox", "-t", "all", "-g", str(folder / "gold.json")]
        score += ["-p", str(folder / "pred.json"), "--profile", args.profile, "--per-document", "--format", "json"]
        score += ["-o", str(out)]
        commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "rescore": (rescore, None),
            "score -t all": (score, None),
        }
        if args.baseline:
            before = {**os.environ, "PYTHONPATH": str(args.baseline.resolve() / "src")}
            commands["rescore (before)"] = (rescore, before)
        timed(score)
        for name, (command, env) in commands.items():
            if name != "score -t all":
                unranked(folder)
                timed(command, env)
                if step("compare", folder, args.notes, args.profile):
                    sys.exit(f"{name}: the stored result differs from the command's report")
        print("stored result = command's report: every score and per-document row")

        runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        for round_ in range(args.repeat):
            order = list(commands.items())
            for name, (command, env) in order if round_ % 2 == 0 else order[::-1]:
                if name != "score -t all":
                    unranked(folder)
                runs[name].append(timed(command, env))
        load = os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; load {load:.1f}")
    medians = {name: [statistics.median(column) for column in zip(*found, strict=True)] for name, found in runs.items()}
    for name, (wall, cpu, memory) in medians.items():
        walls = ", ".join(f"{w:.2f}" for w, _, _ in runs[name])
        cpus = ", ".join(f"{c:.2f}" for _, c, _ in runs[name])
        print(f"{name:>16}: {wall:6.2f} s wall (runs {walls}), {cpu:6.2f} s CPU (runs {cpus}), peak {memory:.0f} MiB")
    for name in medians:
        for i, what in ((0, "wall"), (1, "CPU")):
            if name != "score -t all":
                ratio = medians[name][i] / medians["score -t all"][i]
                print(f"{name} / score -t all, {what}: {ratio:.2f}x (goal <= 1.5x)")


if __name__ == "__main__":
    main()
