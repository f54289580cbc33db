"""Time ``nlpbench score ner --profile nervaluate`` against nervaluate 1.2.1 on the same generated corpus.

    python benchmarks/ner_vs_nervaluate.py [--documents 2000] [--seed 13] [--rounds 3] [--before SRC]

Writes a gold and a predicted JSONL file (tokens, every tenth one non-ASCII,
holding a colon or a JSON escape; entities) into a temporary directory, scores
them with ``score_ner`` under the ``nervaluate`` and ``standard`` profiles
(reading and checking both files included), with the ``nervaluate`` matching alone on the entities in memory, and gives
nervaluate's ``Evaluator`` the same entities in memory. Each runs once before
the clock (imports, lazy loading), then ``--rounds`` times in turn; the table
shows the median wall and CPU seconds (user + system of this process: what a
busy machine changes least). nervaluate's counts must equal nlpbench's in
every scheme, overall and per label (COR, INC, PAR, MIS, SPU, POSSIBLE,
ACTUAL; precision, recall and F1 within 1e-12), or the script stops with an
error. With ``--before``, ``score_ner`` of an earlier checkout's ``src`` runs
too, in a child process, in turn with the others, and must give the same
report (JSON) under both profiles. nervaluate is a test-only install
(``scripts/test`` installs it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from nervaluate import Evaluator

from machine import load
from nlpbench.metrics.ner import Entity, NerCounts, match_greedy
from nlpbench.tasks.ner import score_ner

LABELS = ("PER", "LOC", "ORG", "MISC")
SCHEMES = {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}
PROFILES = ("nervaluate", "standard")
VALUES = ("precision", "recall", "f1")


def corpus(documents: int, seed: int) -> list[tuple[int, list[dict], list[dict]]]:
    """Documents of 300 tokens with about 30 gold entities; predictions keep, shift, relabel, drop and add."""
    rng = random.Random(seed)
    docs = []
    for _ in range(documents):
        length, gold, pred = 300, [], []
        position = 0
        while True:
            position += rng.randint(2, 14)
            if position >= length - 4:
                break
            end = position + rng.randint(1, 4)
            gold.append({"start": position, "end": end, "label": rng.choice(LABELS)})
            position = end
        for entity in gold:
            roll = rng.random()
            if roll < 0.6:
                pred.append(dict(entity))
            elif roll < 0.75:
                pred.append({**entity, "label": rng.choice(LABELS)})
            elif roll < 0.9:
                pred.append({**entity, "end": min(length, entity["end"] + 1)})
        for _ in range(rng.randint(0, 4)):
            start = rng.randrange(length - 3)
            pred.append({"start": start, "end": start + rng.randint(1, 3), "label": rng.choice(LABELS)})
        rng.shuffle(pred)
        docs.append((length, gold, pred))
    return docs


#: Every tenth token is one of these, as clinical notes hold them: non-ASCII (written as UTF-8), a colon, and
#: the quote and backslash JSON escapes.
ODD_TOKENS = ("é", "naïve", "µg", "T:", '"', "\\", "mg/dL", "Ø")


def write(path: Path, docs, side: int) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for i, doc in enumerate(docs):
            tokens = [ODD_TOKENS[n // 10 % len(ODD_TOKENS)] if n % 10 == 9 else f"w{n}" for n in range(doc[0])]
            record = {"id": f"d{i}", "tokens": tokens, "entities": doc[side]}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def inclusive(entities: list[dict]) -> list[dict]:
    return [{"label": e["label"], "start": e["start"], "end": e["end"] - 1} for e in entities]


def timed(work: Callable[[], object]) -> tuple[float, float, object]:
    """Wall and CPU seconds of ``work()``, and its result."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def child(gold: str, pred: str, profile: str) -> None:
    """In a child process (``--child``): score once before the clock, once timed; print times and report."""
    score_ner(gold, pred, profile=profile, gold_format="jsonl")
    wall, cpu, report = timed(lambda: score_ner(gold, pred, profile=profile, gold_format="jsonl"))
    print(json.dumps({"wall": wall, "cpu": cpu, "report": report.to_json()}))  # type: ignore[attr-defined]


def before(src: str, gold: Path, pred: Path, profile: str) -> tuple[float, float, str]:
    """``score_ner`` of the checkout whose ``src`` is given, timed in a child process; its report's JSON."""
    env = {**os.environ, "PYTHONPATH": src}
    argv = [sys.executable, __file__, "--child", str(gold), str(pred), profile]
    done = json.loads(subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout)
    return done["wall"], done["cpu"], done["report"]


def compare(ours, theirs, in_memory: NerCounts) -> None:
    """Stop unless every count of every scheme, overall and per label, is nervaluate's (and the matching's
    alone on the entities in memory)."""
    for ours_name, theirs_name in SCHEMES.items():
        if in_memory.get(ours_name).cor != ours.score(ours_name)["cor"]:
            raise SystemExit(f"{ours_name}: match_greedy in memory differs from score_ner")
        for label in (None, *LABELS):
            row = ours.score(ours_name) if label is None else ours.score(ours_name, label=label)
            result = (theirs["overall"] if label is None else theirs["entities"][label])[theirs_name]
            same = [row[k] for k in ("cor", "inc", "par", "mis", "spu", "possible", "actual")] == [
                result.correct, result.incorrect, result.partial, result.missed, result.spurious,
                result.possible, result.actual,
            ] and all(
                math.isclose(row[k], getattr(result, k), rel_tol=0, abs_tol=1e-12) for k in VALUES
            )  # fmt: skip
            if not same:
                raise SystemExit(f"{ours_name} {label or 'overall'}: the counts differ from nervaluate's")
    overall = {name: ours.score(name) for name in SCHEMES}
    for name, row in overall.items():
        print(f"{name:8} COR {row['cor']} INC {row['inc']} PAR {row['par']} MIS {row['mis']} SPU {row['spu']}")
    print(f"every count and value of the 4 schemes, overall and for {len(LABELS)} labels, is nervaluate's")


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="the src folder of an earlier checkout, timed and compared too")
    args = parser.parse_args()
    docs = corpus(args.documents, args.seed)
    entities = sum(len(g) for _, g, _ in docs), sum(len(p) for _, _, p in docs)
    print(f"{args.documents} documents, {entities[0]} gold and {entities[1]} predicted entities; load {load()}")
    in_memory = [
        ([Entity(e["start"], e["end"], e["label"]) for e in g], [Entity(e["start"], e["end"], e["label"]) for e in p])
        for _, g, p in docs
    ]
    gold_dicts, pred_dicts = [inclusive(g) for _, g, _ in docs], [inclusive(p) for _, _, p in docs]
    with tempfile.TemporaryDirectory() as folder:
        gold, pred = Path(folder) / "gold.jsonl", Path(folder) / "pred.jsonl"
        write(gold, docs, 1)
        write(pred, docs, 2)
        work: dict[str, Callable[[], object]] = {
            **{
                f"nlpbench --profile {p} (files read)": (
                    lambda p=p: score_ner(gold, pred, profile=p, gold_format="jsonl")
                )
                for p in PROFILES
            },
            "nlpbench match_greedy (in memory)": lambda: sum((match_greedy(g, p) for g, p in in_memory), NerCounts()),
            "nervaluate 1.2.1 Evaluator (in memory)": lambda: Evaluator(
                gold_dicts, pred_dicts, tags=list(LABELS), loader="dict"
            ).evaluate(),
        }
        results = {name: run() for name, run in work.items()}  # once before the clock
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in work}
        reports: dict[str, str] = {}
        for _ in range(args.rounds):
            if args.before:
                for profile in PROFILES:
                    wall, cpu, reports[profile] = before(args.before, gold, pred, profile)
                    times.setdefault(f"before: --profile {profile} (files read)", []).append((wall, cpu))
            for name, run in work.items():
                wall, cpu, _ = timed(run)
                times[name].append((wall, cpu))
    print(f"medians of {args.rounds} rounds in turn; load after {load()}")
    print(f"{'':50} {'wall s':>8} {'CPU s':>8}")
    for name, measured in times.items():
        wall, cpu = statistics.median(w for w, _ in measured), statistics.median(c for _, c in measured)
        print(f"{name:50} {wall:8.2f} {cpu:8.2f}")
    compare(
        results["nlpbench --profile nervaluate (files read)"],
        results["nervaluate 1.2.1 Evaluator (in memory)"],
        results["nlpbench match_greedy (in memory)"],
    )
    for profile in PROFILES if args.before else ():
        if reports[profile] != results[f"nlpbench --profile {profile} (files read)"].to_json():  # type: ignore[attr-defined]
            raise SystemExit(f"--profile {profile}: the report differs from the earlier checkout's")
        print(f"--profile {profile}: the report (JSON, every row per document included) is the earlier checkout's")


if __name__ == "__main__":
    main()
