"""``nlpsandbox`` profile against nlpsandbox-client 4.3.1 itself on random inputs.

nlpsandbox-client is a test dependency only (``pip install --no-deps
--ignore-requires-python nlpsandbox-client==4.3.1 nltk``). Each seed builds a
few notes with gold annotations and a perturbed prediction (shifted starts,
lengths off by 1 to 3, annotations sharing a start, punctuation, apostrophes
and quotes, missing or changed subtypes, notes missing on one side), and every
annotation type is scored by both.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import random

import pytest

from nlpbench.model import PHI_TYPES
from nlpbench.tasks.sandbox import score_sandbox

evaluation = pytest.importorskip("nlpsandboxclient.evaluation", reason="nlpsandbox-client 4.3.1 is not installed")

WORDS = [
    "Seen", "by", "Dr.", "O'Neil", "at", "St.", "Mary's", "on", '"Tuesday"', "(Boston),", "MA", "02114",
    "can't", "12/26/2020", "Jon", "Smith-Jones", "room", "5B;", "--", "a.m.", "e-mail:", "x@y.org", "'quoted'",
    "Dept.", "of", "Medicine", "...", "U.S.A.", "#4431", "'s", "``", "''",
]  # fmt: skip
PHI = ["date", "person_name", "location", "physical_address", "id", "contact"]


class PhysicalAddressEvaluation(evaluation.Evaluation):
    """4.3.1 dropped this class; its base class still has the address branch."""

    evaluation_type = "address"
    annotation = "addressType"
    col = "physical_address_annotations"
    post_path = "textPhysicalAddressAnnotations"


REFERENCE = {
    "date": evaluation.DateEvaluation,
    "person_name": evaluation.PersonNameEvaluation,
    "location": evaluation.LocationEvaluation,
    "physical_address": PhysicalAddressEvaluation,
    "id": evaluation.IdEvaluation,
    "contact": evaluation.ContactEvaluation,
}
ROWS = {
    ("instance", "strict"): "instance_strict",
    ("instance", "relax"): "instance_relax",
    ("token", "strict"): "token",
}


def random_text(rng: random.Random) -> str:
    pieces = []
    for _ in range(rng.randint(20, 60)):
        pieces.append(rng.choice(WORDS))
        pieces.append(rng.choice([" ", " ", " ", "  ", "\n", ", "]))
    return "".join(pieces)


def random_annotation(rng: random.Random, text: str, phi: str) -> dict:
    start = rng.randrange(len(text) - 1)
    length = rng.randint(1, min(25, len(text) - start))
    annotation = {"start": start, "length": length, "text": text[start : start + length], "confidence": 90}
    subtypes = PHI_TYPES[phi].subtypes or ("MM/DD/YYYY", "YYYY", "doctor", "")
    if rng.random() < 0.8:
        annotation[PHI_TYPES[phi].type_attribute] = rng.choice(subtypes[:4])
    return annotation


def perturb(rng: random.Random, text: str, gold: dict, phi: str) -> dict | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    start, length = gold["start"], gold["length"]
    if roll < 0.35:
        start = min(len(text) - 1, max(0, start + rng.choice([-3, -2, -1, 1, 2, 3])))
    elif roll < 0.65:
        length = max(1, length + rng.choice([-3, -2, -1, 1, 2, 3]))
    length = min(length, len(text) - start)
    pred = dict(gold, start=start, length=length, text=text[start : start + length])
    attribute = PHI_TYPES[phi].type_attribute
    if rng.random() < 0.2:
        pred.pop(attribute, None)
    elif rng.random() < 0.2:
        pred[attribute] = rng.choice(PHI_TYPES[phi].subtypes or ("YYYY", "doctor"))
    return pred


def random_pair(seed: int) -> tuple[list, list]:
    rng = random.Random(seed)
    gold_records, pred_records = [], []
    for n in range(rng.randint(1, 4)):
        text = random_text(rng)
        gold_record = {"name": "a", "annotationSource": {"resourceSource": {"name": f"ds/fhir/Note/note-{n}"}}}
        pred_record = json.loads(json.dumps(gold_record))
        for phi in PHI:
            gold = [random_annotation(rng, text, phi) for _ in range(rng.randint(0, 6))]
            pred = [p for g in gold if (p := perturb(rng, text, g, phi))]
            pred += [random_annotation(rng, text, phi) for _ in range(rng.randint(0, 2))]
            if gold and rng.random() < 0.3:  # another annotation at a gold start
                extra = dict(rng.choice(gold))
                extra["length"] = max(1, min(extra["length"] + rng.randint(-2, 2), len(text) - extra["start"]))
                extra["text"] = text[extra["start"] : extra["start"] + extra["length"]]
                (gold if rng.random() < 0.5 else pred).append(extra)
            rng.shuffle(pred)
            gold_record[PHI_TYPES[phi].array] = gold
            pred_record[PHI_TYPES[phi].array] = pred
        gold_records.append(gold_record)
        if rng.random() < 0.9:
            pred_records.append(pred_record)
    return gold_records, pred_records


def reference_scores(phi: str, gold_path, pred_path) -> dict[str, tuple]:
    evaluator = REFERENCE[phi]()
    evaluator.convert_dict(str(pred_path), str(gold_path))
    with contextlib.redirect_stdout(io.StringIO()):
        result = evaluator.eval()
    location, typed = result.values()
    scores: dict[str, dict] = {}
    for item in location:
        scores.setdefault(ROWS[item["type"], item["mode"]], {})[item["metric"]] = item["value"]
    values = {item["metric"]: item["value"] for item in typed}
    if not any(isinstance(v, float) and math.isnan(v) for v in values.values()):
        scores["type"] = values
    return {metric: (v["F1"], v["precision"], v["recall"]) for metric, v in scores.items()}


def our_scores(phi: str, gold_path, pred_path) -> dict[str, tuple]:
    report = score_sandbox(gold_path, pred_path, phi, profile="nlpsandbox")
    return {
        row["metric"]: (row["f1"], row["precision"], row["recall"])
        for row in report.scores
        if "label" not in row and "average" not in row
    }


@pytest.mark.reference
@pytest.mark.parametrize("seed", range(250))
def test_identical_to_nlpsandbox_client(tmp_path, seed):
    gold, pred = random_pair(seed)
    gold_path, pred_path = tmp_path / "gold.json", tmp_path / "pred.json"
    # odd seeds: one JSON line (read through ijson); even seeds: a record per line (read through msgspec)
    layout = json.dumps if seed % 2 else (lambda records: "[\n" + ",\n".join(map(json.dumps, records)) + "\n]\n")
    gold_path.write_text(layout(gold))
    pred_path.write_text(layout(pred))
    for phi in PHI:
        assert our_scores(phi, gold_path, pred_path) == reference_scores(phi, gold_path, pred_path), phi


def split_records(rng: random.Random, records: list[dict]) -> list[dict]:
    """Each note's annotations spread over one to three records, with the same or another dataset path,
    the pieces in any order among the other notes' records (every piece keeps every array)."""
    pieces = []
    for record in records:
        n_pieces = rng.randint(1, 3)
        note = record["annotationSource"]["resourceSource"]["name"].rsplit("/", 1)[-1]
        parts = [
            {
                "name": "a",
                "annotationSource": {"resourceSource": {"name": rng.choice(["ds", "other/ds2"]) + f"/{note}"}},
            }
            for _ in range(n_pieces)
        ]
        for phi in PHI:
            array = PHI_TYPES[phi].array
            for part in parts:
                part[array] = []
            for annotation in record[array]:
                rng.choice(parts)[array].append(annotation)
        pieces.append(parts)
    ordered = []
    while any(pieces):  # the pieces of one note stay in their order; notes interleave
        parts = rng.choice([parts for parts in pieces if parts])
        ordered.append(parts.pop(0))
    return ordered


@pytest.mark.reference
@pytest.mark.parametrize("seed", range(120))
def test_split_records_identical_to_nlpsandbox_client(tmp_path, seed):
    rng = random.Random(10_000 + seed)
    gold, pred = (split_records(rng, records) for records in random_pair(seed))
    gold_path, pred_path = tmp_path / "gold.json", tmp_path / "pred.json"
    layout = json.dumps if seed % 2 else (lambda records: "[\n" + ",\n".join(map(json.dumps, records)) + "\n]\n")
    gold_path.write_text(layout(gold))
    pred_path.write_text(layout(pred))
    for phi in PHI:
        assert our_scores(phi, gold_path, pred_path) == reference_scores(phi, gold_path, pred_path), phi


@pytest.mark.reference
@pytest.mark.parametrize("seed", range(40))
def test_every_type_in_one_pass_identical_to_nlpsandbox_client(tmp_path, seed):
    gold, pred = random_pair(seed)
    gold_path, pred_path = tmp_path / "gold.json", tmp_path / "pred.json"
    gold_path.write_text(json.dumps(gold))
    pred_path.write_text(json.dumps(pred))
    report = score_sandbox(gold_path, pred_path, PHI, profile="nlpsandbox")
    for phi in PHI:
        ours = {
            row["metric"]: (row["f1"], row["precision"], row["recall"])
            for row in report.scores
            if row["annotation_type"] == phi and "label" not in row and "average" not in row
        }
        assert ours == reference_scores(phi, gold_path, pred_path), phi
