"""Time ``nlpbench score ner --profile nervaluate`` against nervaluate 1.2.1 on the same generated corpus.

    python benchmarks/ner_vs_nervaluate.py [--documents 2000] [--seed 13]

Writes a gold and a predicted JSONL file (tokens, entities) into a temporary
directory, scores them with ``score_ner`` (reading the files included), with the
``nervaluate`` matching alone on the entities in memory, and gives
nervaluate's ``Evaluator`` the same entities in memory, then checks that all
report the same counts in every scheme. nervaluate is a
test-only install (``scripts/test`` installs it).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from nervaluate import Evaluator

from nlpbench.metrics.ner import Entity, NerCounts, match_greedy
from nlpbench.tasks.ner import score_ner

LABELS = ("PER", "LOC", "ORG", "MISC")
SCHEMES = {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}


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


def write(path: Path, docs, side: int) -> None:
    with open(path, "w") as handle:
        for i, doc in enumerate(docs):
            tokens = [f"w{n}" for n in range(doc[0])]
            handle.write(json.dumps({"id": f"d{i}", "tokens": tokens, "entities": doc[side]}) + "\n")


def inclusive(entities: list[dict]) -> list[dict]:
    return [{"label": e["label"], "start": e["start"], "end": e["end"] - 1} for e in entities]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    docs = corpus(args.documents, args.seed)
    entities = sum(len(g) for _, g, _ in docs), sum(len(p) for _, _, p in docs)
    print(f"{args.documents} documents, {entities[0]} gold and {entities[1]} predicted entities")
    with tempfile.TemporaryDirectory() as folder:
        gold, pred = Path(folder) / "gold.jsonl", Path(folder) / "pred.jsonl"
        write(gold, docs, 1)
        write(pred, docs, 2)
        timings = {}
        for profile in ("nervaluate", "standard"):
            started = time.perf_counter()
            report = score_ner(gold, pred, profile=profile, gold_format="jsonl")
            timings[f"nlpbench --profile {profile} (files read)"] = time.perf_counter() - started
            if profile == "nervaluate":
                ours = report
    entities_in_memory = [
        ([Entity(e["start"], e["end"], e["label"]) for e in g], [Entity(e["start"], e["end"], e["label"]) for e in p])
        for _, g, p in docs
    ]
    started = time.perf_counter()
    in_memory = sum((match_greedy(g, p) for g, p in entities_in_memory), NerCounts())
    timings["nlpbench match_greedy (in memory)"] = time.perf_counter() - started
    started = time.perf_counter()
    theirs = Evaluator(
        [inclusive(g) for _, g, _ in docs], [inclusive(p) for _, _, p in docs], tags=list(LABELS), loader="dict"
    ).evaluate()["overall"]
    timings["nervaluate 1.2.1 Evaluator (in memory)"] = time.perf_counter() - started
    for name, seconds in timings.items():
        print(f"{name:45} {seconds:8.2f} s")
    for ours_name, theirs_name in SCHEMES.items():
        row, result = ours.score(ours_name), theirs[theirs_name]
        same = (row["cor"], row["inc"], row["par"], row["mis"], row["spu"]) == (
            result.correct, result.incorrect, result.partial, result.missed, result.spurious,
        )  # fmt: skip
        print(f"{ours_name:8} COR {row['cor']} INC {row['inc']} PAR {row['par']} MIS {row['mis']} SPU {row['spu']}"
              f"  identical to nervaluate: {same}")  # fmt: skip
        if not same or in_memory.get(ours_name).cor != row["cor"]:
            raise SystemExit(f"{ours_name}: the counts differ from nervaluate's")


if __name__ == "__main__":
    main()
