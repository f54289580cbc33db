import json

import pytest

from tests.cli.errors import one_line_error

GOLD = """-DOCSTART- O

John B-PER
Smith I-PER
flew O
to O
New B-LOC
York I-LOC
. O

-DOCSTART- O

Acme B-ORG
hired O
Mary B-PER
"""

PRED = """-DOCSTART- O

John B-PER
Smith O
flew O
to O
New B-ORG
York I-ORG
. B-MISC

-DOCSTART- O

Acme B-ORG
hired O
Mary B-PER
"""

FIELDS = ["metric", "cor", "inc", "par", "mis", "spu", "possible", "actual", "precision", "recall", "f1"]


@pytest.fixture
def files(tmp_path):
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    gold.write_text(GOLD)
    pred.write_text(PRED)
    return gold, pred


def test_conll_json_rows_and_counts(cli, files):
    gold, pred = files
    result = cli("score", "ner", "--gold", gold, "--pred", pred, "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report) == ["task", "profile", "inputs", "scores", "per_document", "warnings"]
    overall = [row for row in report["scores"] if "label" not in row]
    assert [row["metric"] for row in overall] == ["strict", "exact", "partial", "type"]
    assert all(list(row) == FIELDS for row in overall)
    strict, exact, partial, type_ = overall
    # John Smith: partial/PER; New York: exact bounds, wrong type; ".": spurious; Acme, Mary: correct
    assert (strict["cor"], strict["inc"], strict["mis"], strict["spu"]) == (2, 2, 0, 1)
    assert (exact["cor"], exact["inc"]) == (3, 1)
    assert (partial["cor"], partial["par"], partial["precision"]) == (3, 1, 3.5 / 5)
    assert (type_["cor"], type_["inc"]) == (3, 1)
    per = [row for row in report["scores"] if row.get("label") == "PER" and row["metric"] == "strict"]
    assert per[0]["cor"] == 1 and per[0]["inc"] == 1
    documents = [row for row in report["per_document"] if row["metric"] == "strict"]
    assert [row["document"] for row in documents] == ["1", "2"]
    assert sum(row["cor"] for row in documents) == strict["cor"]


def test_same_input_same_bytes_and_other_renderings(cli, files, tmp_path):
    gold, pred = files
    args = ("score", "ner", "-g", gold, "-p", pred, "--profile", "nervaluate", "-f", "json")
    assert cli(*args).stdout == cli(*args).stdout
    table = cli("score", "ner", "-g", gold, "-p", pred)
    assert "ner · profile standard" in table.stdout and "partial" in table.stdout
    out = tmp_path / "r.md"
    assert cli("score", "ner", "-g", gold, "-p", pred, "-f", "markdown", "-o", out).exit_code == 0
    assert "| strict |" in out.read_text()


def test_labels_keep_both_sides_to_a_set(cli, files):
    gold, pred = files
    report = json.loads(cli("score", "ner", "-g", gold, "-p", pred, "--labels", "PER", "-f", "json").stdout)
    strict = report["scores"][0]
    assert (strict["possible"], strict["actual"]) == (2, 2)
    assert {row.get("label") for row in report["scores"]} == {None, "PER"}


def test_jsonl_in_characters_against_conll_in_tokens_is_refused(cli, files, tmp_path):
    gold, _ = files
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"id": "1", "text": "John Smith", "entities": []}) + "\n")
    result = cli("score", "ner", "-g", gold, "-p", pred, "--pred-format", "jsonl")
    assert one_line_error(result) == "document 1: the gold and predicted texts differ: offsets cannot be compared"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--profile", "trusted-ke"), "the trusted-ke profile needs --labels"),
        (("--profile", "bogus"), "unknown profile 'bogus' for ner"),
        (("--gold-format", "omin"), "OMIn mentions need --tokens"),
        (("--pred-format", "omin"), "OMIn mention files are scored against OMIn mention files only"),
        (("--labels", ","), "--labels ',': give a label set"),
    ],
)
def test_usage_problems_are_one_line(cli, files, args, message):
    gold, pred = files
    result = cli("score", "ner", "-g", gold, "-p", pred, *args)
    assert message in one_line_error(result)


def test_bad_conll_is_one_line_and_exit_2(cli, files, tmp_path):
    gold, _ = files
    bad = tmp_path / "bad.conll"
    bad.write_text("John B-PER\nSmith X-PER\n")
    result = cli("score", "ner", "-g", gold, "-p", bad)
    assert one_line_error(result) == f"{bad}: line 2: bad tag 'X-PER': expected O or B-, I-, E-, S- and a type"


def test_bad_jsonl_is_one_line_and_exit_2(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "d", "tokens": ["a"], "entities": [{"start": 0, "end": 3, "label": "X"}]}\n')
    result = cli("score", "ner", "-g", bad, "-p", bad, "--gold-format", "jsonl")
    assert one_line_error(result) == f"{bad}: line 1: entity 0 at 0-3 is empty or outside the document (1 tokens)"


OMIN = "omin/OMIn_dataset/gold_standard/processed"


@pytest.mark.vectors
def test_omin_command_of_the_readme(cli, vectors):
    result = cli(
        "score", "ner", "--profile", "trusted-ke", "--gold-format", "omin", "--labels", "ace05",
        "--gold", vectors / OMIN / "ner.csv",
        "--pred", vectors / "omin/tool_results/pl-marker/pl-marker_ace05_bert_NER_jun17.csv",
        "--tokens", vectors / "omin/coref/s2e-coref/data/test.english.jsonlines",
        "-f", "json",
    )  # fmt: skip
    report = json.loads(result.stdout)
    partial = report["scores"][2]
    assert (partial["metric"], partial["precision"], partial["recall"], partial["f1"]) == ("partial", 0.78, 0.27, 0.4)
    assert "documents only in the prediction were not scored (gold documents only)" in result.stderr


@pytest.mark.vectors
def test_omin_typed_gold_and_bad_omin_input(cli, vectors, tmp_path):
    bad = tmp_path / "tool.csv"
    bad.write_text("c5_id,entities,labels\n19990213001379A,ACFT,\n")
    result = cli(
        "score", "ner", "--gold-format", "omin", "--gold", vectors / OMIN / "ner_conll.csv", "--pred", bad,
        "--tokens", vectors / "omin/coref/s2e-coref/data/test.english.jsonlines",
    )  # fmt: skip
    assert one_line_error(result) == f"{bad}: row 1 (line 2): a mention (4 characters) without a label"
