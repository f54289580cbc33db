"""The ``deid`` task on the platform: a de-identifier submitted like an annotator, run over the dataset's notes,
its de-identified notes stored and scored into a result with intervals, ranked on the task's own table."""

from __future__ import annotations

import json
import sys

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from nlpbench.api.platform import create_app as create_platform
from nlpbench.api.tool import create_app, create_deidentifier_app
from nlpbench.cli.serve import build_annotator
from nlpbench.platform import queue as queues
from nlpbench.platform.keys import create_key
from nlpbench.platform.worker import Worker
from nlpbench.store import open_store
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.submissions import DeidentifiedNote
from nlpbench.web.app import create_app as create_site
from tests.platform.test_worker import assert_no_text, note_texts, run_worker, shown, submit
from tests.toolkit import served


def test_nlpbenchs_own_deidentifier_is_validated_run_scored_and_ranked(nb, dataset, db_url):
    with served(create_deidentifier_app(build_annotator("phi"))) as url:
        submission = submit(nb, "--task", "deid", "--dataset", "notes", "--tool", url)
        worked = run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert [e["status"] for e in data["events"]] == ["RECEIVED", "VALIDATING", "ANNOTATING", "SCORING", "SCORED"]
    assert "(nlpsandbox:phi-deidentifier), reproducible on 3 notes" in data["events"][2]["reason"]
    assert data["progress"] == {"done": len(dataset), "total": len(dataset)}
    (result,) = data["results"]
    rows = {row["metric"]: row for row in result["scores"]["deid"] if "label" not in row}
    assert 0.5 < rows["hipaa_token"]["recall"] <= 1 and rows["format"]["rate"] > 0.5  # type tags, as asked
    assert result["reproducibility"]["tool"]["type"] == "nlpsandbox:phi-deidentifier"
    assert result["perDocumentRows"] == len(dataset) * len(rows)
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            stored = session.scalar(select(func.count()).where(DeidentifiedNote.submission_id == int(submission)))
            ranked = session.scalars(select(ResultInterval).where(ResultInterval.ranked)).all()
        assert stored == len(dataset)
        assert [(i.metric, i.field) for i in ranked] == [("hipaa_token", "recall")]
        assert ranked[0].low <= ranked[0].value <= ranked[0].high
        with TestClient(create_site(opened)) as site:
            (line,) = site.get("/tasks/deid.json").json()
            page = site.get("/tasks/deid")
        column = next(key for key in line if key.startswith("notes") and " " not in key)
        assert line[column] == rows["hipaa_token"]["recall"] and line[f"{column} rank"] == 1
        assert page.status_code == 200 and "HIPAA-token recall" in page.text
    finally:
        opened.close()
    assert_no_text(worked.stdout + worked.stderr + json.dumps(data), note_texts(db_url))


def test_an_annotator_is_no_deidentifier_and_a_deidentifier_no_annotator(nb, dataset):
    with (
        served(create_app(build_annotator("phi"))) as annotator,
        served(create_deidentifier_app(build_annotator("phi"))) as deidentifier,
    ):
        as_deid = submit(nb, "--task", "deid", "--dataset", "notes", "--tool", annotator)
        as_phi = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", deidentifier)
        run_worker(nb)
    assert shown(nb, as_deid)["status"] == "INVALID"
    assert shown(nb, as_deid)["reason"].endswith(
        "the tool is a nlpsandbox:phi-annotator, not a de-identifier (nlpsandbox:phi-deidentifier)"
    )
    assert shown(nb, as_phi)["status"] == "INVALID"
    assert "not an annotator of PHI" in shown(nb, as_phi)["reason"]


def test_a_file_of_deidentified_notes_is_checked_against_the_dataset_and_scored(nb, dataset, db_url, tmp_path):
    texts = note_texts(db_url)
    good = tmp_path / "notes.jsonl"
    good.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(dataset, texts, strict=True)))
    stranger = tmp_path / "stranger.jsonl"
    stranger.write_text(json.dumps({"id": "someone-else", "text": texts[0]}) + "\n")
    scored = submit(nb, "--task", "deid", "--dataset", "notes", "--predictions", good)
    refused = submit(nb, "--task", "deid", "--dataset", "notes", "--predictions", stranger)
    run_worker(nb)
    data = shown(nb, scored)
    assert data["status"] == "SCORED", data["reason"]
    rows = {row["metric"]: row for row in data["results"][0]["scores"]["deid"] if "label" not in row}
    assert rows["hipaa_token"]["recall"] == 0 and rows["alignment"]["rate"] == 1  # the notes as they were
    assert shown(nb, refused)["status"] == "INVALID"
    assert shown(nb, refused)["reason"] == "stranger.jsonl: 1 notes not in dataset notes (first: someone-else)"


def test_the_served_deidentifier_started_by_its_command_is_scored(nb, dataset):
    command = f"{sys.executable} -m nlpbench serve -a deidentifier --port 8080 --log-level info"
    submission = submit(nb, "--task", "deid", "--dataset", "notes", "--command", command)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    logs = json.loads(nb("submissions", "logs", submission, "--format", "json").stdout)
    assert "POST /api/v1/deidentifiedNotes" in logs["tool"]["output"]["content"]


def test_a_deidentifier_submitted_over_http_is_scored_with_its_per_document_counts(nb, dataset, db_url):
    opened = open_store(db_url)
    try:
        with served(create_deidentifier_app(build_annotator("phi"))) as url:
            tool = httpx.URL(url)
            queues.configure_queue(opened, "default", tool_hosts=[f"{tool.host}:{tool.port}"])
            with opened.session() as session:
                team, organiser = create_key(session, team="team-a"), create_key(session, team=None)
            with TestClient(create_platform(opened)) as api:
                made = api.post("/api/v1/submissions", headers={"X-API-Key": team},
                                json={"task": "deid", "dataset": "notes", "toolUrl": url})  # fmt: skip
                assert made.status_code == 201, made.text
                Worker(opened, poll=0.05, lease=10).run(until_idle=True)
                path = f"/api/v1/submissions/{made.json()['id']}"
                data = api.get(path, headers={"X-API-Key": team}).json()
                rows = api.get(f"{path}/documents?profile=standard", headers={"X-API-Key": organiser}).json()
    finally:
        opened.close()
    assert data["status"] == "SCORED", data["reason"]
    assert len(rows["perDocument"]) == data["results"][0]["perDocumentRows"] == len(dataset) * 8
    assert {"document", "metric", "part", "whole"} <= set(next(r for r in rows["perDocument"] if "part" in r))
