"""nlpbench's ``nervaluate`` profile against the PyPI package nervaluate on random entity sets.

Documents are written as JSONL with tokens, scored through ``score_ner``,
and the same entities (inclusive token ends) are given to nervaluate's
``Evaluator``; every count and value of every scheme, overall and per
label, must agree.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlpbench.tasks.ner import score_ner

nervaluate = pytest.importorskip("nervaluate")

pytestmark = pytest.mark.reference

LENGTH = 24
LABELS = ("PER", "LOC", "ORG")
SCHEMES = {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}


@st.composite
def entity(draw):
    start = draw(st.integers(0, LENGTH - 1))
    end = draw(st.integers(start + 1, min(LENGTH, start + 6)))
    return {"start": start, "end": end, "label": draw(st.sampled_from(LABELS))}


@st.composite
def document(draw):
    gold = draw(st.lists(entity(), max_size=6))
    # predictions: some gold entities, some shifted or relabelled, some new, in any order
    pred = []
    for e in gold:
        choice = draw(st.integers(0, 3))
        if choice == 1:
            pred.append(dict(e))
        elif choice == 2:
            pred.append({**e, "label": draw(st.sampled_from(LABELS))})
        elif choice == 3:
            start = max(0, min(LENGTH - 1, e["start"] + draw(st.integers(-2, 2))))
            pred.append({**e, "start": start, "end": max(start + 1, min(LENGTH, e["end"] + draw(st.integers(-2, 2))))})
    pred += draw(st.lists(entity(), max_size=3))
    return gold, draw(st.permutations(pred))


def write(path, docs, side):
    with open(path, "w") as handle:
        for i, doc in enumerate(docs):
            tokens = [f"t{n}" for n in range(LENGTH)]
            handle.write(json.dumps({"id": f"d{i}", "tokens": tokens, "entities": doc[side]}) + "\n")


def inclusive(entities):
    return [{"label": e["label"], "start": e["start"], "end": e["end"] - 1} for e in entities]


def assert_same(ours, theirs):
    assert (ours["cor"], ours["inc"], ours["par"], ours["mis"], ours["spu"]) == (
        theirs.correct,
        theirs.incorrect,
        theirs.partial,
        theirs.missed,
        theirs.spurious,
    )
    assert (ours["possible"], ours["actual"]) == (theirs.possible, theirs.actual)
    assert ours["precision"] == pytest.approx(theirs.precision, abs=1e-12)
    assert ours["recall"] == pytest.approx(theirs.recall, abs=1e-12)
    assert ours["f1"] == pytest.approx(theirs.f1, abs=1e-12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(document(), min_size=1, max_size=4), tags=st.sampled_from([LABELS, ("PER", "LOC")]))
def test_counts_and_values_agree(tmp_path, docs, tags):
    pairs = [{"gold": gold, "pred": list(pred)} for gold, pred in docs]
    write(tmp_path / "gold.jsonl", pairs, "gold")
    write(tmp_path / "pred.jsonl", pairs, "pred")
    report = score_ner(
        tmp_path / "gold.jsonl",
        tmp_path / "pred.jsonl",
        profile="nervaluate",
        gold_format="jsonl",
        labels=",".join(tags),
    )
    evaluator = nervaluate.Evaluator(
        [inclusive(p["gold"]) for p in pairs], [inclusive(p["pred"]) for p in pairs], tags=list(tags), loader="dict"
    )
    results = evaluator.evaluate()
    for ours_name, theirs_name in SCHEMES.items():
        assert_same(report.score(ours_name), results["overall"][theirs_name])
        for label, by_scheme in results["entities"].items():
            assert_same(report.score(ours_name, label=label), by_scheme[theirs_name])
    reported = {row["label"] for row in report.scores if row.get("label")}
    assert reported == set(results["entities"])
