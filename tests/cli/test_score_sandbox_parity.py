"""``score sandbox`` on inputs nlpsandbox-client reads differently or not at all, several types in one pass,
and subtype rows for tools that predict no subtypes."""

import contextlib
import io
import json

import pytest

from nlpbench.cli.score import example_file

TEXT_DATE = {"start": 3, "length": 10, "text": "12/26/2020", "confidence": 90, "dateFormat": "MM/DD/YYYY"}
SHORT_DATE = {"start": 3, "length": 5, "text": "12/26", "confidence": 90, "dateFormat": "MM/DD"}
CITY = {"start": 20, "length": 7, "text": "Seattle", "confidence": 90, "locationType": "city"}
STATE = {"start": 30, "length": 2, "text": "WA", "confidence": 90, "locationType": "state"}


def record(path, **arrays):
    return {"name": "r", "annotationSource": {"resourceSource": {"name": path}}, **arrays}


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def scores(cli, gold, pred, *args):
    result = cli("score", "sandbox", "--gold", gold, "--pred", pred, "-f", "json", *args)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    return report, {r["metric"]: r for r in report["scores"] if "label" not in r and "average" not in r}


def test_a_notes_records_merge_later_span_winning_under_nlpsandbox(cli, tmp_path):
    # gold: one record; prediction: the note split over two records with different dataset paths, the later
    # record's span at start 3 overriding the earlier one's, as nlpsandbox-client keys spans by (note, start)
    gold = write(tmp_path, "gold.json", [record("ds/Note/n1", textDateAnnotations=[TEXT_DATE])])
    pred = write(
        tmp_path,
        "pred.json",
        [
            record("ds-a/fhir/Note/n1", textDateAnnotations=[SHORT_DATE]),
            record("ds-b/fhir/Note/n1", textDateAnnotations=[TEXT_DATE]),
        ],
    )
    report, rows = scores(cli, gold, pred, "-t", "date", "--profile", "nlpsandbox")
    assert (rows["instance_strict"]["tp"], rows["instance_strict"]["fp"]) == (1, 0)
    assert any("1 notes split over several annotation records, merged" in w for w in report["warnings"])
    assert rows == reference(gold, pred, "DateEvaluation", rows)
    # standard merges without keying by start: both predicted dates are scored
    report, rows = scores(cli, gold, pred, "-t", "date")
    assert (rows["instance_strict"]["tp"], rows["instance_strict"]["fp"]) == (1, 1)
    assert any("notes split over several annotation records" in w for w in report["warnings"])
    # the other order: the short span wins
    swapped = write(tmp_path, "swapped.json", json.loads(pred.read_text())[::-1])
    _, rows = scores(cli, gold, swapped, "-t", "date", "--profile", "nlpsandbox")
    assert (rows["instance_strict"]["tp"], rows["instance_strict"]["fp"]) == (0, 1)


def reference(gold, pred, evaluator: str, ours: dict) -> dict:
    """nlpsandbox-client's F1, precision and recall put into our rows (counts copied from ours)."""
    evaluation = pytest.importorskip("nlpsandboxclient.evaluation")
    scorer = getattr(evaluation, evaluator)()
    scorer.convert_dict(str(pred), str(gold))
    with contextlib.redirect_stdout(io.StringIO()):
        location, _ = scorer.eval().values()
    names = {("instance", "strict"): "instance_strict", ("instance", "relax"): "instance_relax"}
    names[("token", "strict")] = "token"
    expected = {metric: dict(row) for metric, row in ours.items()}
    for item in location:
        expected[names[item["type"], item["mode"]]][item["metric"].lower()] = item["value"]
    return expected


def test_a_record_without_the_array_is_scored_and_the_official_failure_named(cli, tmp_path):
    gold = write(tmp_path, "gold.json", [record("n1", textDateAnnotations=[TEXT_DATE]), record("n2")])
    pred = write(tmp_path, "pred.json", [record("n1", textDateAnnotations=[TEXT_DATE]), record("n2")])
    evaluation = pytest.importorskip("nlpsandboxclient.evaluation")
    with pytest.raises(KeyError, match="textContactAnnotations"):  # what the official scorer does
        evaluation.ContactEvaluation().convert_dict(str(pred), str(gold))
    report, rows = scores(cli, gold, pred, "-t", "contact", "--profile", "nlpsandbox")
    assert rows["instance_strict"]["tp"] == 0 and rows["instance_strict"]["fn"] == 0
    assert (
        f"nlpsandbox-client 4.3.1, nlpsandboxclient/evaluation.py would fail on {gold}: "
        "KeyError: 'textContactAnnotations' (a record of note n1 has no textContactAnnotations array)"
    ) in report["warnings"][0]
    report, rows = scores(cli, gold, pred, "-t", "date", "--profile", "nlpsandbox")
    assert "KeyError: 'textDateAnnotations' (a record of note n2" in report["warnings"][0]
    assert rows["instance_strict"]["tp"] == 1
    report, _ = scores(cli, gold, pred, "-t", "contact")  # the standard profile has no official scorer to fail
    assert not any("would fail" in w for w in report["warnings"])


def test_a_page_of_annotations_is_scored_and_the_official_failure_named(cli, tmp_path):
    gold = write(tmp_path, "gold.json", [record("n1", textDateAnnotations=[TEXT_DATE])])
    page = write(tmp_path, "page.json", {"annotations": [record("n1", textDateAnnotations=[TEXT_DATE])]})
    evaluation = pytest.importorskip("nlpsandboxclient.evaluation")
    with pytest.raises(TypeError, match="string indices must be integers"):
        evaluation.DateEvaluation().convert_dict(str(page), str(gold))
    report, rows = scores(cli, gold, page, "-t", "date", "--profile", "nlpsandbox-legacy")
    assert rows["instance_strict"]["tp"] == 1
    assert report["warnings"] == [
        f"nlpsandbox-client 4.2.0 and earlier, nlpsandboxclient/evaluation.py would fail on {page}: "
        "TypeError: string indices must be integers (it reads the file as a list of annotation records; "
        "this one holds a data-node page {annotations: …}); nlpbench scores it (a missing array holds no annotations)"
    ]


@pytest.mark.parametrize("profile", ["standard", "nlpsandbox"])
def test_all_types_in_one_pass_give_the_per_type_numbers(cli, profile):
    gold, pred = example_file("gold.json"), example_file("pred.json")
    combined = json.loads(
        cli("score", "sandbox", "--example", "-t", "all", "--profile", profile, "-f", "json", "--errors", "3").stdout
    )
    assert combined["inputs"]["annotation_type"] == ["date", "person_name", "location", "id", "contact"]
    repeated = cli("score", "sandbox", "--example", "-t", "id", "-t", "date", "--profile", profile, "-f", "json")
    assert json.loads(repeated.stdout)["inputs"]["annotation_type"] == ["id", "date"]
    for name in combined["inputs"]["annotation_type"]:
        single = json.loads(
            cli("score", "sandbox", "--gold", gold, "--pred", pred, "-t", name, "--profile", profile,
                "-f", "json", "--errors", "3").stdout
        )  # fmt: skip
        for part in ("scores", "per_document", "errors"):
            mine = [{k: v for k, v in row.items() if k != "annotation_type"} for row in combined[part]
                    if row["annotation_type"] == name]  # fmt: skip
            assert mine == single[part], (name, part)
            assert all(next(iter(row)) == "annotation_type" for row in combined[part])


def test_subtype_rows_slice_recall_by_gold_and_false_positives_by_prediction(cli, tmp_path):
    gold = write(tmp_path, "gold.json", [record("n1", textLocationAnnotations=[CITY, STATE])])
    untyped = [{k: v for k, v in CITY.items() if k != "locationType"}, {**STATE, "start": 40, "text": "OR"}]
    pred = write(tmp_path, "pred.json", [record("n1", textLocationAnnotations=untyped)])
    report, _ = scores(cli, gold, pred, "-t", "location")
    sliced = {r["label"]: (r["tp"], r["fp"], r["fn"]) for r in report["scores"] if r.get("label")}
    strict = [r for r in report["scores"] if r["metric"] == "instance_strict" and r.get("label")]
    assert {r["label"]: (r["tp"], r["fp"], r["fn"], r["recall"]) for r in strict} == {
        "(none)": (0, 0, 0, 0.0),
        "city": (1, 0, 0, 1.0),  # matched by an untyped prediction: recall by gold subtype
        "state": (0, 1, 1, 0.0),  # the prediction at 40 is a false positive of its own subtype
    }
    assert set(sliced) == {"(none)", "city", "state"}
    dates = write(tmp_path, "dates.json", [record("n1", textDateAnnotations=[TEXT_DATE, SHORT_DATE])])
    report, _ = scores(cli, dates, dates, "-t", "date")
    assert not [r for r in report["scores"] if r.get("label")]  # dateFormat strings are not subtypes
