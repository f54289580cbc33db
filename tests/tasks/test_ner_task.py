"""score_ner on small OMIn-style files: the trusted-ke quirks against the standard rules."""

from __future__ import annotations

import json

import pytest

from nlpbench.errors import InputError
from nlpbench.tasks.ner import score_ner


def words(text: str) -> list[str]:
    return text.split()


TOKENS = {
    "19860706034879A": words(
        "on the first of may 1986 , after a long climb , the ilot steven 's engine quit . ilot landed"
    ),
    "20000000000002A": words("fuel tank ( left ) empty"),
    "20000000000003A": words("nothing here"),
}


@pytest.fixture
def omin(tmp_path):
    source = tmp_path / "tokens.jsonlines"
    source.write_text(
        "".join(
            json.dumps({"doc_key": f"faa/{i}_{d}_0", "sentences": [t]}) + "\n"
            for i, (d, t) in enumerate(TOKENS.items())
        )
    )
    gold = tmp_path / "ner.csv"
    gold.write_text(
        "id,sample,entities\n"
        "19860706034879A,s,PILOT\n19860706034879A,s,STEVEN'S ENGINE\n"
        "20000000000002A,s,FUEL TANK (LEFT)\n20000000000002A,s,FUEL TANK\n"
    )
    pred = tmp_path / "tool.csv"
    pred.write_text(
        "c5_id,entities,labels\n"
        "19860706034879A,pilot,PERSON\n19860706034879A,Steven's engine,ORGANIZATION\n"
        "20000000000002A,fuel tank,VEH\n20000000000002A,fuel tank,VEH\n20000000000002A,empty,CARDINAL\n"
        "20000000000003A,here,PERSON\n"
    )
    return gold, pred, source


def score(omin, **options):
    gold, pred, source = omin
    return score_ner(gold, pred, gold_format="omin", tokens=source, **options)


def counts(row):
    return tuple(row[k] for k in ("cor", "inc", "par", "mis", "spu"))


def test_trusted_ke(omin):
    report = score(omin, profile="trusted-ke", labels="ace05")
    assert report.inputs["token_source_fixes"] == [
        "19860706034879A: token_restorations turned token 13 ILOT into PILOT"
    ]
    # PILOT: gold ORG (dummy), predicted PERSON → PER: same bounds, another type → exact COR.
    # STEVEN'S ENGINE: both merge 's; ORGANIZATION → ORG: exact match. FUEL TANK ×2 → VEHICLE: FUEL TANK (LEFT)
    # contains FUEL TANK, so FUEL TANK comes first in gold and takes both predictions (a single
    # occurrence: both land on it). CARDINAL is not in ace05; the third document is not in the gold.
    exact = report.score("exact")
    assert counts(exact) == (4, 0, 0, 1, 0)
    assert (exact["possible"], exact["actual"], exact["precision"], exact["recall"]) == (5, 4, 1.0, 0.8)
    assert counts(report.score("strict")) == (1, 3, 0, 1, 0)
    assert any("1 documents only in the prediction were not scored" in w for w in report.warnings)


def test_standard(omin):
    report = score(omin)
    # PILOT is not found (the restoration is trusted-ke's), nor is the second FUEL TANK, whose one
    # occurrence the first took; types are dropped, the gold having none; the third document's HERE is spurious
    exact = report.score("exact")
    assert counts(exact) == (2, 0, 0, 2, 4)
    assert report.inputs.get("token_source_fixes") is None
    warnings = "\n".join(report.warnings)
    assert (
        "1 gold mentions are not in the tokens of their document and count as missed: "
        "19860706034879A (a mention of 5 characters)" in warnings
    )
    assert "2 prediction mentions are not in the tokens" in warnings
    assert "the gold has no types" in warnings
    assert [row for row in report.scores if row.get("label")] == []


def test_gold_documents_only_and_labels_under_standard(omin):
    report = score(omin, gold_documents_only=True, labels="VEH")
    exact = report.score("exact")
    assert (exact["actual"], exact["spu"]) == (2, 1)


def test_a_document_missing_from_the_token_source(omin, tmp_path):
    gold, pred, _ = omin
    empty = tmp_path / "empty.jsonlines"
    empty.write_text("")
    with pytest.raises(InputError, match="document 19860706034879A is not in the token source"):
        score_ner(gold, pred, gold_format="omin", tokens=empty)
