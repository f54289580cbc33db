import json

import pytest


def test_example_pair_prints_a_table(cli):
    result = cli("score", "sandbox", "--example", "--annotation-type", "date")
    assert result.exit_code == 0
    assert "instance_strict" in result.stdout and "profile standard" in result.stdout


def test_json_follows_the_output_contract(cli):
    result = cli("score", "sandbox", "--example", "-t", "location", "--format", "json", "--errors", "2")
    report = json.loads(result.stdout)
    assert list(report) == ["task", "profile", "inputs", "scores", "per_document", "warnings", "errors"]
    overall = [row for row in report["scores"] if "label" not in row and "average" not in row]
    assert [row["metric"] for row in overall] == ["instance_strict", "instance_relax", "token", "type", "hipaa"]
    for row in overall:
        assert set(row) == {"metric", "tp", "fp", "fn", "precision", "recall", "f1"}
    strict = overall[0]
    per_doc = [row for row in report["per_document"] if row["metric"] == "instance_strict"]
    assert sum(row["tp"] for row in per_doc) == strict["tp"]
    assert sum(row["fn"] for row in per_doc) == strict["fn"]
    assert {e["kind"] for e in report["errors"]} == {"FP", "FN"}
    assert all(set(e) == {"kind", "document", "start", "end", "text"} for e in report["errors"])
    assert sum(e["kind"] == "FN" for e in report["errors"]) == 2


def test_same_input_same_bytes(cli):
    args = ("score", "sandbox", "--example", "-t", "person_name", "--format", "json")
    assert cli(*args).stdout == cli(*args).stdout


def test_profile_rows_left_out(cli):
    report = json.loads(
        cli("score", "sandbox", "--example", "-t", "date", "--profile", "nlpsandbox", "-f", "json").stdout
    )
    metrics = [row["metric"] for row in report["scores"] if "label" not in row and "average" not in row]
    assert metrics == ["instance_strict", "instance_relax", "token"]
    assert report["profile"] == "nlpsandbox"


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_other_renderings(cli, fmt, tmp_path):
    out = tmp_path / f"report.{fmt}"
    result = cli("score", "sandbox", "--example", "-t", "id", "-f", fmt, "-o", out)
    assert result.exit_code == 0
    text = out.read_text()
    assert "instance_strict" in text
    assert ("<table" in text) == (fmt == "html")


def test_bad_input_is_one_line_and_exit_2(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"annotationSource": {"resourceSource": {"name": "n1"}}, "textDateAnnotations": [{"start": -1}]}]')
    result = cli("score", "sandbox", "--gold", bad, "--pred", bad, "-t", "date")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"nlpbench: error: {bad}: record 0, textDateAnnotations[0]: missing required field")


def test_a_discontinuous_span_is_scored_as_its_extent_with_a_warning(cli, tmp_path):
    # NLP Sandbox spans are contiguous; brat can give another kind: it is scored from its first fragment's
    # start to its last fragment's end, over the note's text there, and named by offsets only
    gold, pred = tmp_path / "gold", tmp_path / "pred"
    for side, ann in (
        (gold, "T1\tlocation 0 6;11 18\tBoston Seattle\n"),
        (pred, "T1\tlocation 0 18\tBoston and Seattle\n"),
    ):
        side.mkdir()
        (side / "n1.txt").write_text("Boston and Seattle\n")
        (side / "n1.ann").write_text(ann)
    result = cli("score", "sandbox", "--gold", gold, "--gold-format", "brat", "--pred", pred,
                 "--pred-format", "brat", "-t", "location", "-f", "json", "--no-per-document")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    scores = {row["metric"]: row for row in json.loads(result.stdout)["scores"] if "subtype" not in row}
    assert scores["instance_strict"]["f1"] == 1.0 and scores["token"]["f1"] == 1.0
    assert result.stderr.count("\n") == 1
    assert "1 discontinuous annotations scored as their extent" in result.stderr
    assert "note n1, annotation at 0-18" in result.stderr and "Boston" not in result.stderr


def test_missing_file_and_unknown_profile(cli, tmp_path):
    missing = cli("score", "sandbox", "--gold", tmp_path / "nope.json", "--pred", tmp_path / "nope.json")
    assert missing.exit_code == 2 and "nope.json: no such file" in missing.stderr
    unknown = cli("score", "sandbox", "--example", "--profile", "bogus")
    assert unknown.exit_code == 2 and "unknown profile 'bogus' for spans" in unknown.stderr


def test_note_on_one_side_is_scored_with_a_warning(cli, tmp_path):
    record = {"annotationSource": {"resourceSource": {"name": "n1"}},
              "textDateAnnotations": [{"start": 0, "length": 4, "text": "2020", "confidence": 90}]}  # fmt: skip
    gold, pred = tmp_path / "g.json", tmp_path / "p.json"
    gold.write_text(json.dumps([record]))
    pred.write_text("[]")
    result = cli("score", "sandbox", "--gold", gold, "--pred", pred, "-t", "date", "-f", "json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["scores"][0] == {"metric": "instance_strict", "tp": 0, "fp": 0, "fn": 1,
                                   "precision": 0.0, "recall": 0.0, "f1": 0.0}  # fmt: skip
    assert report["warnings"] == ["1 notes only in the gold, scored against nothing: n1"]
    assert "warning: 1 notes only in the gold" in result.stderr


def test_i2b2_gold_can_be_scored_directly(cli, tmp_path):
    from nlpbench import formats
    from tests.formats.helpers import note

    formats.get("i2b2").write([note()], tmp_path / "xml")
    formats.get("sandbox").write([note()], tmp_path / "pred.json")
    result = cli("score", "sandbox", "--gold", tmp_path / "xml", "--gold-format", "i2b2",
                 "--pred", tmp_path / "pred.json", "-t", "location", "-f", "json")  # fmt: skip
    assert json.loads(result.stdout)["scores"][0]["f1"] == 1.0


def test_annotations_sharing_a_start_are_reported_under_nlpsandbox(cli, tmp_path):
    annotations = [
        {"start": 0, "length": 4, "text": "John", "confidence": 90},
        {"start": 0, "length": 10, "text": "John Smith", "confidence": 90},
    ]
    record = {"annotationSource": {"resourceSource": {"name": "n1"}}, "textPersonNameAnnotations": annotations}
    gold = tmp_path / "g.json"
    gold.write_text(json.dumps([record]))
    report = json.loads(cli("score", "sandbox", "--gold", gold, "--pred", gold, "-t", "person_name",
                            "--profile", "nlpsandbox", "-f", "json").stdout)  # fmt: skip
    assert report["scores"][0]["tp"] == 1  # one instance per start survives on each side
    assert "2 annotations share a start with a later one" in report["warnings"][0]
    standard = json.loads(
        cli("score", "sandbox", "--gold", gold, "--pred", gold, "-t", "person_name", "-f", "json").stdout
    )
    assert standard["scores"][0]["tp"] == 2 and standard["warnings"] == []


@pytest.mark.parametrize("profile", ["standard", "nlpsandbox"])
def test_subtypes_that_are_not_strings_are_compared_as_json_values(cli, tmp_path, profile):
    # a locationType that is a JSON list, object, number or boolean is valid JSON outside the schema: scored
    # (equal values match on type, 1 and true alike as in Python) with the schema warning, never a crash
    values = [["city"], {"kind": ["city"]}, 1, ["city"], {"kind": ["state"]}]
    predicted = [["city"], {"kind": ["city"]}, True, ["state"], {"kind": ["city"]}]
    for name, subtypes in (("g.json", values), ("p.json", predicted)):
        annotations = [
            {"start": 10 * i, "length": 6, "text": "Boston", "confidence": 90, "locationType": subtype}
            for i, subtype in enumerate(subtypes)
        ]
        record = {"annotationSource": {"resourceSource": {"name": "n1"}}, "textLocationAnnotations": annotations}
        (tmp_path / name).write_text(json.dumps([record]))
    result = cli("score", "sandbox", "--gold", tmp_path / "g.json", "--pred", tmp_path / "p.json",
                 "-t", "location", "--profile", profile, "-f", "json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    scores = {row["metric"]: row for row in json.loads(result.stdout)["scores"] if "label" not in row}
    assert (scores["type"]["tp"], scores["type"]["fp"], scores["type"]["fn"]) == (3, 2, 2)
    assert (scores["instance_strict"]["tp"], scores["instance_strict"]["fp"]) == (5, 0)
    assert "locationType values outside the 1.2.0 schema" in result.stderr
