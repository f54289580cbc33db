import json

import pytest

from tests.cli.errors import one_line_error

TEXT = "John Smith works for Acme in Boston."
GOLD_ANN = """T1\tPER 0 10\tJohn Smith
T2\tORG 21 25\tAcme
T3\tLOC 29 35\tBoston
R1\tworks_for Arg1:T1 Arg2:T2
R2\tlocated_in Arg1:T2 Arg2:T3
"""
PRED_ANN = """T1\tPER 0 10\tJohn Smith
T2\tLOC 21 25\tAcme
T3\tLOC 29 35\tBoston
R1\tworks_for Arg1:T1 Arg2:T2
R2\tlocated_in Arg1:T3 Arg2:T2
R3\tworks_for Arg1:T1 Arg2:T2
"""


@pytest.fixture
def brat(tmp_path):
    for side, ann in (("gold", GOLD_ANN), ("pred", PRED_ANN)):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "doc1.txt").write_text(TEXT)
        (folder / "doc1.ann").write_text(ann)
    return tmp_path / "gold", tmp_path / "pred"


def scores(result):
    return {(row["metric"], row.get("label"), row.get("average")): row for row in json.loads(result.stdout)["scores"]}


def test_brat_strict_and_boundaries(cli, brat):
    gold, pred = brat
    result = cli("score", "relations", "-g", gold, "-p", pred, "-f", "json")
    assert result.exit_code == 0, result.stderr
    rows = scores(result)
    # works_for: typed wrong (ORG → LOC) so strict misses it twice; boundaries finds one of the two copies
    assert [rows["strict", None, None][k] for k in ("tp", "fp", "fn")] == [0, 3, 2]
    assert [rows["boundaries", None, None][k] for k in ("tp", "fp", "fn")] == [1, 2, 1]
    assert [rows["boundaries", "works_for", None][k] for k in ("tp", "fp", "fn")] == [1, 1, 0]
    macro = rows["boundaries", None, "macro"]
    assert (macro["types"], macro["precision"], macro["recall"]) == (2, 0.25, 0.5)


def test_rebel_sets_percentages_and_listed_types(cli, brat):
    gold, pred = brat
    result = cli(
        "score", "relations", "-g", gold, "-p", pred, "--profile", "rebel",
        "--relation-types", "works_for,located_in,employer", "-f", "json",
    )  # fmt: skip
    rows = scores(result)
    assert [rows["boundaries", None, None][k] for k in ("tp", "fp", "fn")] == [1, 1, 1]  # the repeat counts once
    assert rows["boundaries", "works_for", None]["precision"] == 100.0
    macro = rows["boundaries", None, "macro"]
    # works_for 100/100/100, located_in 0/0/0, employer (no triples) 0/0/0
    assert (macro["types"], macro["precision"], macro["f1"]) == (3, 33.33, 33.33)


def test_surface_triples_against_omin_csv(cli, tmp_path):
    gold = tmp_path / "re.csv"
    gold.write_text(
        "id,subject,subject_type,relation,relation_type,object,object_type\n"
        "A,Aircraft,Object,struck,Collision,Tree,Obstacle\nA,Engine,Component,quit,State,Takeoff,Phase\n"
    )
    pred = tmp_path / "pred.jsonl"
    pred.write_text(
        json.dumps({"id": "A", "triples": [{"head": "aircraft", "label": "Struck", "tail": " tree "}]}) + "\n"
    )
    result = cli(
        "score",
        "relations",
        "-g",
        gold,
        "-p",
        pred,
        "--gold-format",
        "omin-re",
        "--pred-format",
        "jsonl-triples",
        "-f",
        "json",
    )
    rows = scores(result)
    assert [rows["boundaries", None, None][k] for k in ("tp", "fp", "fn")] == [1, 0, 1]
    assert rows["strict", None, None]["tp"] == 0  # no types predicted
    assert json.loads(result.stdout)["inputs"]["by"] == "text"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--by", "span", "--gold-format", "omin-re"), "omin-re triples have no spans"),
        (("--by", "tokens"), "unknown comparison 'tokens'"),
        (("--relation-types", " , "), "lists no type"),
        (("--profile", "bogus"), "unknown profile 'bogus' for relations"),
    ],
)
def test_usage_problems_are_one_line(cli, brat, args, message):
    gold, pred = brat
    result = cli("score", "relations", "-g", gold, "-p", pred, *args)
    assert message in one_line_error(result)


def test_relation_to_an_unknown_entity_is_one_line(cli, brat, tmp_path):
    gold, _ = brat
    pred = tmp_path / "bad.jsonl"
    pred.write_text(
        json.dumps({"id": "doc1", "text": TEXT, "entities": [], "relations": [{"head": 0, "tail": 1, "label": "r"}]})
        + "\n"
    )
    result = cli("score", "relations", "-g", gold, "-p", pred, "--pred-format", "jsonl")
    assert one_line_error(result) == f"{pred}: line 1: relation 0: head 0 is no entity index or id"


@pytest.mark.vectors
def test_omin_gold_against_itself(cli, vectors):
    gold = vectors / "omin/OMIn_dataset/gold_standard/processed/re.csv"
    result = cli("score", "relations", "-g", gold, "-p", gold, "--gold-format", "omin-re", "-f", "json")
    rows = scores(result)
    assert (rows["strict", None, None]["tp"], rows["strict", None, None]["f1"]) == (37, 1.0)
    assert "skipped 1 empty rows" in result.stderr
