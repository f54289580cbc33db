"""De-identification steps chosen per queue (issue 22 §2): an organiser's ``submissions queue --deid-steps``,
asked of the queue's de-identifiers at validation and over the dataset, scored against, kept in the result's
reproducibility fields; a date-shift queue's result and leaderboard have a date-shift consistency row."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from nlpbench.api.tool import create_deidentifier_app
from nlpbench.cli.serve import build_annotator
from nlpbench.store import open_store
from nlpbench.store.submissions import Submission
from nlpbench.web.app import create_app as create_site
from tests.platform.test_worker import assert_no_text, note_texts, run_worker, shown, submit
from tests.toolkit import served

#: Dates moved by 30 days, then every other type masked with ``*``.
STEPS = [
    {"annotationTypes": ["text_date"], "dateOffsetConfig": {"offsetDays": 30}, "confidenceThreshold": 0},
    {
        "annotationTypes": ["text_person_name", "text_location", "text_id", "text_contact"],
        "maskingCharConfig": {"maskingChar": "*"},
        "confidenceThreshold": 0,
    },
]
SHOWN = "de-identification steps: dateOffset +30 days (date); maskingChar (person_name,location,id,contact)"


def overall(rows: list[dict], metric: str) -> dict:
    (row,) = [r for r in rows if r["metric"] == metric and r.get("label") is None and r.get("average") is None]
    return row


def test_a_date_shift_queue_scores_date_shift_consistency(nb, dataset, db_url, tmp_path):
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps({"deidentificationSteps": STEPS}))
    configured = nb("submissions", "queue", "default", "--deid-steps", steps)
    assert configured.exit_code == 0, configured.stderr
    assert f"{SHOWN}, webhook: none" in configured.stdout
    with served(create_deidentifier_app(build_annotator("phi"))) as url:
        submission = submit(nb, "--task", "deid", "--dataset", "notes", "--tool", url)
        worked = run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    (result,) = data["results"]
    assert result["reproducibility"]["deidSteps"] == STEPS
    rows = result["scores"]["deid"]
    shift = overall(rows, "date_shift")
    assert shift["whole"] > 0 and shift["rate"] == 1  # every date moved by the same 30 days
    assert overall(rows, "format")["rate"] > 0.5  # masks and shifted dates, as the queue asks
    opened = open_store(db_url)
    try:
        with TestClient(create_site(opened)) as site:
            (line,) = site.get("/tasks/deid.json").json()
            shown_result = site.get(f"/results/{result['id']}.json").json()
            page = site.get(f"/results/{result['id']}")
    finally:
        opened.close()
    assert line["notes submission"] == int(submission)  # the table links to the result, which shows every row
    assert overall(shown_result["rows"], "date_shift")["whole"] == shift["whole"]
    assert shown_result["reproducibility"]["deidSteps"] == STEPS
    assert page.status_code == 200 and "date_shift" in page.text
    assert_no_text(worked.stdout + worked.stderr + json.dumps(data), note_texts(db_url))


def test_the_default_steps_have_no_date_shift_and_come_back_on_request(nb, dataset, tmp_path):
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps(STEPS))
    assert nb("submissions", "queue", "default", "--deid-steps", steps).exit_code == 0
    reset = nb("submissions", "queue", "default", "--default-deid-steps")
    assert reset.exit_code == 0 and "de-identification steps: default, webhook: none" in reset.stdout
    with served(create_deidentifier_app(build_annotator("phi"))) as url:
        submission = submit(nb, "--task", "deid", "--dataset", "notes", "--tool", url)
        run_worker(nb)
    (result,) = shown(nb, submission)["results"]
    assert result["reproducibility"]["deidSteps"] == [
        {"annotationTypes": ["text_date", "text_person_name", "text_location", "text_id", "text_contact"],
         "annotationTypeMaskConfig": {}}
    ]  # fmt: skip
    assert overall(result["scores"]["deid"], "date_shift")["whole"] == 0


def test_a_rescore_uses_the_steps_the_submission_ran_with(nb, dataset, db_url, tmp_path):
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps(STEPS))
    assert nb("submissions", "queue", "default", "--deid-steps", steps).exit_code == 0
    with served(create_deidentifier_app(build_annotator("phi"))) as url:
        submission = submit(nb, "--task", "deid", "--dataset", "notes", "--tool", url)
        run_worker(nb)
    (first,) = shown(nb, submission)["results"]
    assert overall(first["scores"]["deid"], "date_shift")["whole"] > 0
    # the organiser goes back to the default steps after the run: the submission was asked for date offsets
    assert nb("submissions", "queue", "default", "--default-deid-steps").exit_code == 0
    rescored = nb("rescore", submission, "--profile", first["profile"])
    assert rescored.exit_code == 0, rescored.stderr
    (again,) = shown(nb, submission)["results"]
    assert again["scores"] == first["scores"] and again["reproducibility"]["deidSteps"] == STEPS
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            assert session.get_one(Submission, int(submission)).deid_steps == STEPS
    finally:
        opened.close()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "steps.json: "),
        ('{"steps": []}', "expected a list of de-identification steps"),
        ("[]", "no de-identification steps: give at least one"),
        ('[{"annotationTypes": ["text_date"]}]', "give exactly one of"),
        ('[{"annotationTypes": ["text_person_name"], "dateOffsetConfig": {"offsetDays": 3}}]',
         "dateOffsetConfig applies to text_date only, not text_person_name"),
        ('[{"annotationTypes": ["text_dates"], "redactConfig": {}}]', "not a 1.2.0 de-identification step"),
        ('[{"annotationTypes": ["text_date"], "surrogateConfig": {}}]', "surrogateConfig is a step nlpbench scores"),
    ],
)  # fmt: skip
def test_bad_steps_are_one_line_and_exit_2(nb, tmp_path, content, problem):
    steps = tmp_path / "steps.json"
    steps.write_text(content)
    result = nb("submissions", "queue", "default", "--deid-steps", steps)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("nlpbench: error: ") and problem in result.stderr, result.stderr
    both = nb("submissions", "queue", "default", "--deid-steps", steps, "--default-deid-steps")
    assert both.exit_code == 2 and "not both" in both.stderr
