import json

import pytest

from nlpbench.metrics.ontology import jc_similarity
from tests.cli.errors import one_line_error
from tests.metrics.test_ontology import ZOO


def jsonl(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def files(tmp_path):
    gold = jsonl(
        tmp_path / "gold.jsonl",
        {
            "id": "d1",
            "entities": [
                {"mention": "MY DOG", "qid": "rex", "alternatives": [{"mention": "DOG", "qid": "dog"}]},
                {"mention": "CAT", "qid": "cat"},
                {"mention": "ROBIN", "qid": None},
            ],
        },
    )
    pred = jsonl(
        tmp_path / "pred.jsonl",
        {"id": "d1", "entities": [{"mention": "dog", "qid": "rex"}, {"mention": "cat", "qid": "dog"}]},
        {"id": "d2", "entities": [{"mention": "robin", "qid": "robin"}]},
    )
    ontology = tmp_path / "zoo.json"
    nodes = {
        name: {"instance_of": list(node.instance_of), "subclass_of": list(node.subclass_of), "count": node.count}
        for name, node in ZOO.nodes.items()
    }
    for node in nodes.values():
        if node["count"] is None:
            del node["count"]
    ontology.write_text(json.dumps({"total": ZOO.total, "nodes": nodes}))
    return gold, pred, ontology


def rows(result):
    return {(row["metric"], row.get("mode")): row for row in json.loads(result.stdout)["scores"]}


def test_modes_and_similarity_rows(cli, files):
    gold, pred, ontology = files
    result = cli(
        "score", "linking", "-g", gold, "-p", pred, "--gold-format", "jsonl", "--ontology", ontology, "-f", "json"
    )
    assert result.exit_code == 0, result.stderr
    scores = rows(result)
    # strong: MY DOG unmatched (FN), CAT linked to dog (FP and FN), robin in d2 (FP); ROBIN has no QID
    assert [scores["strong", None][k] for k in ("tp", "fp", "fn")] == [0, 3, 2]
    # weak: DOG is inside MY DOG and rex is its QID
    assert [scores["weak", None][k] for k in ("tp", "fp", "fn")] == [1, 2, 1]
    # flex: dog matches the secondary span DOG and rex, the more specific primary QID, is accepted
    assert [scores["flex", None][k] for k in ("tp", "fp", "fn")] == [1, 2, 1]
    jc = scores["jc", "weak"]
    assert (jc["pairs"], jc["unscored"], jc["averaged"]) == (2, 0, 2)
    assert jc["similarity"] == pytest.approx((1.0 + jc_similarity(ZOO, "cat", "dog")) / 2)
    assert scores["class", "strong"]["pairs"] == 1
    assert "warning: 1 documents only in the prediction, scored against nothing: d2" in result.stderr


def test_trusted_ke_counts_only_gold_entities(cli, files):
    gold, pred, _ = files
    result = cli(
        "score", "linking", "-g", gold, "-p", pred, "--gold-format", "jsonl", "--profile", "trusted-ke", "-f", "json"
    )
    scores = rows(result)
    assert [scores["strong", None][k] for k in ("tp", "fp", "fn")] == [0, 1, 1]
    assert scores["weak", None]["precision"] == 0.5  # two significant digits


def test_unknown_qids_are_reported(cli, files, tmp_path):
    gold, _, ontology = files
    pred = jsonl(tmp_path / "p.jsonl", {"id": "d1", "entities": [{"mention": "cat", "qid": "Q42"}]})
    result = cli(
        "score", "linking", "-g", gold, "-p", pred, "--gold-format", "jsonl", "--ontology", ontology, "-f", "json"
    )
    assert rows(result)["jc", "strong"]["similarity"] is None
    assert "warning: 1 QIDs are not in the ontology; their pairs get no similarity: Q42" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--gold-format", "csv"), "unknown entity-linking format 'csv'; known: omin, jsonl"),
        (("--gold-format", "omin"), "no column id, entity, qid"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, files, args, message):
    gold, pred, _ = files
    result = cli("score", "linking", "-g", gold, "-p", pred, *args)
    assert message in one_line_error(result)


def test_bad_ontology_is_one_line(cli, files, tmp_path):
    gold, pred, _ = files
    bad = tmp_path / "o.json"
    bad.write_text("{")
    result = cli("score", "linking", "-g", gold, "-p", pred, "--gold-format", "jsonl", "--ontology", bad)
    assert one_line_error(result).startswith(f"{bad}: malformed JSON")


@pytest.mark.vectors
def test_omin_blink(cli, vectors):
    result = cli(
        "score", "linking", "--profile", "trusted-ke", "--qid-column", "bi_qid", "-f", "json",
        "--gold", vectors / "omin/OMIn_dataset/gold_standard/processed/nel.csv",
        "--pred", vectors / "omin/tool_results/blink/blink.csv",
    )  # fmt: skip
    scores = rows(result)
    assert [scores[m, None]["f1"] for m in ("strong", "weak", "flex")] == [0.12, 0.14, 0.096]
