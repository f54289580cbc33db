"""score_ner on JSONL files (lines of tokens read as columns, documents scored in batches) against the same
documents read in full and scored one by one in plain Python: the same report, under every profile."""

from __future__ import annotations

import json
import random

import pytest

from nlpbench.formats import jsonl
from nlpbench.model import tokens_document
from nlpbench.tasks import InMemory
from nlpbench.tasks import ner as ner_task
from nlpbench.tasks.ner import score_ner

LABELS = ("PER", "LOC", "ORG", "MISC")


def entities(rng, length):
    found = []
    for _ in range(rng.randint(0, 8)):
        start = rng.randrange(length)
        found.append(
            {"start": start, "end": rng.randint(start + 1, min(length, start + 4)), "label": rng.choice(LABELS)}
        )
    return found


def as_text(record):
    """The record with its text instead of its tokens, entities in characters."""
    offsets = tokens_document(record["id"], record["tokens"]).metadata["tokens"]
    spans = [{**e, "start": offsets[e["start"]][0], "end": offsets[e["end"] - 1][1]} for e in record["entities"]]
    return {"id": record["id"], "text": " ".join(record["tokens"]), "entities": spans}


def write_sides(folder, seed):
    """Gold and predicted JSONL files: most documents in tokens, some in text on one side, some on one side only."""
    rng = random.Random(seed)
    gold, pred = [], []
    for i in range(80):
        tokens = [rng.choice(["a", "bb", "c:d", "é"]) for _ in range(rng.randint(3, 30))]
        pair = [{"id": f"d{i}", "tokens": tokens, "entities": entities(rng, len(tokens))} for _ in range(2)]
        roll = rng.random()
        if roll < 0.1:
            pair[0] = as_text(pair[0])
        elif roll < 0.2:
            pair[1] = as_text(pair[1])
        if roll > 0.95:
            pred.append(pair[1])
            continue
        gold.append(pair[0])
        if roll < 0.9:
            pred.append(pair[1])
    rng.shuffle(pred)
    paths = folder / "gold.jsonl", folder / "pred.jsonl"
    for path, records in zip(paths, (gold, pred), strict=True):
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return paths


@pytest.mark.parametrize("batch", [ner_task.BATCH, 300])
@pytest.mark.parametrize(
    ("profile", "labels"), [("nervaluate", None), ("standard", "PER,LOC"), ("trusted-ke", "conll03")]
)
def test_batches_of_columns_give_the_report_of_documents_one_by_one(tmp_path, monkeypatch, batch, profile, labels):
    gold, pred = write_sides(tmp_path, seed=len(profile) + batch)
    monkeypatch.setattr(ner_task, "BATCH", batch)
    fast = score_ner(gold, pred, profile=profile, gold_format="jsonl", labels=labels)
    monkeypatch.setattr(ner_task, "SMALL", 10**9)
    sides = [InMemory(tuple(jsonl.read(path))) for path in (gold, pred)]
    plain = score_ner(*sides, profile=profile, gold_format="jsonl", labels=labels)
    assert (fast.scores, fast.per_document, fast.warnings) == (plain.scores, plain.per_document, plain.warnings)
    assert len(fast.per_document) > 4 * 60
