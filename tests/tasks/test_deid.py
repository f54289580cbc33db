import json

import pytest

import nlpbench
from nlpbench.errors import InputError
from nlpbench.python_api import example
from nlpbench.tasks.deid import read_config, read_deidentified, score_deid

GOLD = example("gold.json")
RESPONSES = example("deidentified.json")
SHIFTED = example("shifted.jsonl")
STEPS = example("deid-steps.json")


def overall(report, metric):
    (row,) = [r for r in report.scores if r["metric"] == metric and "label" not in r]
    return row


def test_the_headline_is_the_share_of_hipaa_phi_tokens_removed():
    report = score_deid(GOLD, RESPONSES)
    row = overall(report, "hipaa_token")
    assert (row["tp"], row["fn"]) == (49, 2)  # the second doctor's name of note-001 was left
    assert row["recall"] == pytest.approx(49 / 51)
    assert overall(report, "over_redaction")["part"] == 1  # Parkinson's
    assert overall(report, "format")["rate"] == 1
    names = [r for r in report.scores if r["metric"] == "residual" and r.get("label") == "person_name"]
    assert names[0]["part"] == 2


def test_dates_shifted_and_masks_follow_the_configured_steps():
    report = score_deid(GOLD, SHIFTED, config=STEPS)
    shift = overall(report, "date_shift")
    assert (shift["part"], shift["whole"]) == (4, 5)  # 04/21/69 moved by 31 days, the patient's others by 30
    fmt = overall(report, "format")
    assert fmt["whole"] - fmt["part"] == 1  # that one date is not where the offset puts it
    assert overall(report, "over_redaction")["part"] == 0


def test_a_perfect_deidentification_scores_one(tmp_path):
    from nlpbench import formats
    from nlpbench.toolapi.deidentify import deidentify

    config = read_config(STEPS)
    lines = []
    for document in formats.get("sandbox").read(GOLD):
        annotations = [a for a in document.annotations]
        for a in annotations:
            a.confidence = 100
        text, _ = deidentify(document.text, annotations, config.api)
        lines.append(json.dumps({"id": document.id, "text": text}))
    pred = tmp_path / "perfect.jsonl"
    pred.write_text("\n".join(lines))
    report = score_deid(GOLD, pred, config=STEPS)
    assert overall(report, "over_redaction")["part"] == 0
    assert overall(report, "format")["rate"] == 1
    assert overall(report, "date_shift")["rate"] == 1
    assert overall(report, "hipaa_residual")["part"] == 1  # "April 2069": a month and year keep the year's token


def test_a_note_not_deidentified_leaks_all_its_phi(tmp_path):
    pred = tmp_path / "one.json"
    pred.write_text(json.dumps(json.loads(RESPONSES.read_text())[0]))  # a single answer: note-001 only
    report = score_deid(GOLD, pred)
    assert any("2 gold notes have no de-identified note" in w for w in report.warnings)
    rows = {r["document"]: r for r in report.per_document if r["metric"] == "token"}
    assert rows["note-002"]["tp"] == 0 and rows["note-002"]["fn"] > 0


def test_per_document_rows_sum_to_the_overall_counts():
    report = score_deid(GOLD, RESPONSES)
    for metric in ("token", "hipaa_token"):
        rows = [r for r in report.per_document if r["metric"] == metric]
        assert sum(r["tp"] for r in rows) == overall(report, metric)["tp"]
    for metric in ("residual", "over_redaction", "alignment", "format"):
        rows = [r for r in report.per_document if r["metric"] == metric]
        assert sum(r["whole"] for r in rows) == overall(report, metric)["whole"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[1]", "expected an object, found a number"),
        ('{"text": "x"}', "needs a noteId"),
        ('{"id": "note-001", "text": 3}', "must be a string"),
        ('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}', "de-identified twice"),
        ("{nope\n", "line 1: malformed JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
        ('{"noteId": "a", "noteId": "b", "text": "secret"}', "repeats the key 'noteId'"),
    ],
)
def test_bad_predictions_are_named_without_their_text(tmp_path, content, problem):
    pred = tmp_path / "bad.jsonl"
    pred.write_text(content)
    with pytest.raises(InputError, match=problem) as raised:
        list(read_deidentified(pred))
    assert "secret" not in str(raised.value)


def test_a_config_outside_the_api_is_refused(tmp_path):
    config = tmp_path / "steps.json"
    config.write_text(json.dumps([{"annotationTypes": ["text_date"], "dateOffsetConfig": {"offsetDays": "x"}}]))
    with pytest.raises(InputError, match=r"deidentificationSteps\[0\].*offsetDays"):
        read_config(config)


def test_the_default_steps_ask_for_type_tags():
    config = read_config(None)
    assert config.strategies["date"] == ("type",)


def test_command_line_and_python_give_the_same_json(cli):
    result = cli("score", "deid", "--gold", GOLD, "--pred", RESPONSES, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == nlpbench.score("deid", GOLD, RESPONSES).to_json()


def test_intervals_come_from_the_per_document_counts(cli):
    result = cli("score", "deid", "--gold", GOLD, "--pred", SHIFTED, "--config", STEPS, "--ci", "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = {r["metric"]: r for r in json.loads(result.stdout)["scores"] if "label" not in r}
    for metric, field in (("hipaa_token", "recall"), ("date_shift", "rate")):
        row = rows[metric]
        assert row[f"{field}_ci_low"] <= row[field] <= row[f"{field}_ci_high"]


def test_bad_input_is_one_line_and_exit_2(cli, tmp_path):
    pred = tmp_path / "bad.jsonl"
    pred.write_text('{"id": "note-001", "text": ["secret"]}\n')
    result = cli("score", "deid", "--gold", GOLD, "--pred", pred)
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "secret" not in result.stderr


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
        ('{"deidentificationSteps": [], "deidentificationSteps": []}', "repeats the key"),
    ],
)
def test_a_config_is_read_as_every_json_input_is(tmp_path, content, problem):
    config = tmp_path / "steps.json"
    config.write_text(content)
    with pytest.raises(InputError, match=problem):
        read_config(config)
