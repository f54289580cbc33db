"""Submissions through the command line, end to end on both backends: every status path, misbehaving tools.

Each test queues a submission with ``nlpbench submit``, runs ``nlpbench worker --until-idle`` in process
against the runner's misbehaving test tool, and reads the outcome with ``nlpbench submissions show``.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from nlpbench.platform.worker import Worker
from nlpbench.store import open_store, repository
from nlpbench.store.submissions import Submission
from tests.runner.faulty import TIMEOUT

FAST = ("--timeout", str(TIMEOUT), "--retries", "1", "--max-response-bytes", "65536", "--concurrency", "2")
#: What each way of failing says (after the tool URL and the request).
FAULTS = {
    "500": r"HTTP 500 Internal Server Error, application/problem\+json, \d+ bytes$",
    "not_json": r"the response is not JSON \(HTTP 200 OK, application/json, \d+ bytes\)$",
    "schema": r"does not follow the 1.2.0 TextDateAnnotationResponse schema: textDateAnnotations\.0\.start: ",
    "past_end": r"textDateAnnotations\[\d+\]: ends at \d+, beyond the note \(\d+ chars\)$",
    "huge": r"over \d+ bytes: larger than the 65536 bytes one response may take",
    "hang": rf"no answer within {TIMEOUT} s \(2 attempts\)$",
}


def run_worker(nb, *extra: str):
    result = nb("worker", "--until-idle", "--poll", "0.05", "--lease", "10", *extra)
    assert result.exit_code == 0, result.stderr
    return result


def tool_folder(tmp_path) -> Path:
    """``tmp_path/tool``, readable by all: a sandboxed tool runs as an unprivileged user (``tmp_path`` is 0700)."""
    folder = tmp_path / "tool"
    folder.mkdir(mode=0o755, exist_ok=True)
    return folder


def shown(nb, submission: str) -> dict:
    result = nb("submissions", "show", submission, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def submit(nb, *args: str) -> str:
    result = nb("submit", "--team", "team-a", *args)
    assert result.exit_code == 0, result.stderr
    assert re.fullmatch(r"\d+\n", result.stdout)
    return result.stdout.strip()


def note_texts(db_url: str) -> list[str]:
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            return [note.text for note in repository.iter_notes(session, "notes")]
    finally:
        opened.close()


def assert_no_text(output: str, texts: list[str]) -> None:
    """No line of any note appears in ``output`` (tool bodies echo the note: this catches both)."""
    for text in texts:
        for line in text.splitlines():
            if len(line.strip()) >= 12:
                assert line.strip() not in output


def test_a_tool_is_validated_annotated_and_scored_with_per_document_counts(nb, dataset, tool, db_url):
    submission = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", tool.url)
    assert shown(nb, submission)["status"] == "RECEIVED"
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert [e["status"] for e in data["events"]] == ["RECEIVED", "VALIDATING", "ANNOTATING", "SCORING", "SCORED"]
    assert data["progress"] == {"done": len(dataset), "total": len(dataset)}
    assert data["validatedAt"] and data["startedAt"] and data["finishedAt"]
    assert "reproducible on 3 notes" in data["events"][2]["reason"]
    (result,) = data["results"]
    assert sorted(result["scores"]) == ["contact", "date", "id", "location", "person_name"]
    # every note, every metric, every type: one row each
    metrics = sum(
        len({r["metric"] for r in rows if "label" not in r and "average" not in r})
        for rows in result["scores"].values()
    )
    assert result["perDocumentRows"] == len(dataset) * metrics
    provenance = result["reproducibility"]
    assert provenance["tool"] == {
        "name": "regex-phi",
        "version": "1.0.0",
        "license": "mit",
        "url": provenance["tool"]["url"],
        "apiVersion": "1.2.0",
        "type": "nlpsandbox:phi-annotator",
    }
    assert provenance["dataset"]["name"] == "notes" and len(provenance["dataset"]["contentHash"]) == 64
    assert provenance["profile"] == "standard" and provenance["nlpbench"]
    # the predictions are the annotation store submission-<id>, one record per note
    opened = open_store(db_url)
    with opened.session(readonly=True) as session:
        records = list(repository.iter_records(session, "notes", f"submission-{submission}"))
    opened.close()
    assert sorted(r.note_identifier for r in records) == sorted(dataset)
    # rescoring under another profile keeps the first result and adds one
    again = nb("rescore", submission, "--profile", "nlpsandbox")
    assert again.exit_code == 0 and "scored under profile nlpsandbox" in again.stdout
    assert [r["profile"] for r in shown(nb, submission)["results"]] == ["nlpsandbox", "standard"]
    assert tool.requests > len(dataset) * 5  # validation, then every note for every type
    listed = json.loads(nb("submissions", "list", "--format", "json").stdout)
    assert [s["id"] for s in listed] == [int(submission)]


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("phase", ["validation", "annotation"])
def test_a_misbehaving_tool_ends_invalid_or_failed_with_one_line_and_no_text(nb, dataset, tool, db_url, fault, phase):
    assert nb("submissions", "queue", "default", *FAST).exit_code == 0
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    # validation annotates the subset (the first 3 notes); the last note is only seen while annotating
    tool.reset(fault, notes=set(dataset[:3]) if phase == "validation" else {dataset[-1]})
    run_worker(nb)
    data = shown(nb, submission)
    expected = "INVALID" if phase == "validation" else "FAILED"
    assert data["status"] == expected, data["reason"]
    assert re.search(FAULTS[fault], data["reason"]), data["reason"]
    assert "\n" not in data["reason"]
    if phase == "annotation":
        assert data["progress"]["done"] < len(dataset)
        assert data["validatedAt"] is not None
    output = (
        nb("submissions", "show", submission, "--format", "json").stdout + nb("submissions", "logs", submission).stdout
    )
    assert_no_text(output, note_texts(db_url))


def test_a_flaky_tool_is_retried_and_scored(nb, dataset, tool):
    assert nb("submissions", "queue", "default", "--retries", "3").exit_code == 0
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    tool.reset("503", notes={dataset[-1]}, times=2)
    run_worker(nb)
    assert shown(nb, submission)["status"] == "SCORED"


def test_a_tool_answering_tens_of_thousands_of_annotations_a_note_fails_at_that_note(nb, dataset, tool, db_url):
    """The runner's bound of annotations a note (10,000 by default) holds on the platform: one line, at once, and
    nothing of that note stored."""
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    tool.reset("many", notes={dataset[-1]}, many=25_000)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "FAILED", data["reason"]
    assert re.search(f"for note {dataset[-1]}: 25000 annotations for the note, more than the 10000 ", data["reason"])
    opened = open_store(db_url)
    with opened.session(readonly=True) as session:
        stored = {r.note_identifier for r in repository.iter_records(session, "notes", f"submission-{submission}")}
    opened.close()
    assert dataset[-1] not in stored and data["progress"]["done"] == len(stored) < len(dataset)


def test_a_nondeterministic_tool_is_invalid_by_the_reproducibility_check(nb, dataset, tool):
    submission = submit(nb, "--task", "phi", "--dataset", "notes", "--tool", tool.url)
    tool.reset("random", notes=None)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "INVALID"
    assert re.fullmatch(
        r"not reproducible: annotating the 3 validation notes twice gave different annotations for "
        r"\d+ notes \(\d+ spans differ\)",
        data["reason"],
    ), data["reason"]


def test_a_slow_tool_runs_out_of_its_time_budget(nb, dataset, tool):
    assert nb("submissions", "queue", "default", "--time-budget", "0.03", "--concurrency", "1").exit_code == 0
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    tool.reset(delay=0.4, notes=None)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "FAILED"
    match = re.fullmatch(r"time budget of 0.03 min exceeded after (\d+) of 8 notes", data["reason"])
    assert match and int(match[1]) < 8, data["reason"]


def test_cancelled_before_a_worker_claims_it(nb, dataset, tool):
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    cancelled = nb("submissions", "cancel", submission)
    assert cancelled.exit_code == 0 and cancelled.stdout.strip() == f"submission {submission}: CANCELLED"
    run_worker(nb)
    assert tool.requests == 0
    data = shown(nb, submission)
    assert [e["status"] for e in data["events"]] == ["RECEIVED", "CANCELLED"]
    again = nb("submissions", "cancel", submission)
    assert again.exit_code == 2 and "is CANCELLED: it can no longer be cancelled" in again.stderr


def test_prediction_files_of_a_phi_task_are_checked_against_the_notes_and_scored(nb, dataset, tmp_path):
    gold = tmp_path / "gold.json"
    assert nb("dataset", "export", "notes", gold, "--format", "sandbox").exit_code == 0
    submission = submit(nb, "--task", "date", "--dataset", "notes@1", "--predictions", gold)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    f1 = next(r for r in data["results"][0]["scores"]["date"] if r["metric"] == "instance_strict" and "label" not in r)
    assert f1["f1"] == 1.0 and f1["fn"] == 0
    records = json.loads(gold.read_text())
    records[0]["textDateAnnotations"] = [{"start": 10**6, "length": 4, "text": "x" * 4, "dateFormat": ""}]
    records[0]["textDateAnnotations"][0]["confidence"] = 50.0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(records))
    wrong = submit(nb, "--task", "date", "--dataset", "notes", "--predictions", bad)
    run_worker(nb)
    data = shown(nb, wrong)
    assert data["status"] == "INVALID"
    assert re.fullmatch(r"bad.json: note \S+: date at 1000000-1000004 ends beyond the note", data["reason"])


def test_refused_at_once(nb, dataset, tool, tmp_path):
    cases = {
        ("--task", "date", "--dataset", "notes", "--image", "tool@sha256:" + "0" * 64): "--image: not an uploaded",
        ("--task", "date", "--dataset", "nope", "--tool", tool.url): "no dataset 'nope' in the store",
        ("--task", "date", "--dataset", "notes@9", "--tool", tool.url): "dataset notes is version 1, not 9",
        ("--task", "dates", "--dataset", "notes", "--tool", tool.url): "unknown task 'dates'",
        ("--task", "ner", "--dataset", "notes", "--tool", tool.url): "task ner is scored from files",
        (
            "--task",
            "date",
            "--dataset",
            "notes",
        ): "give exactly one of --tool, --command, --archive, --image, --predictions or --llm",
        ("--task", "date", "--dataset", "notes", "--tool", "ftp://x"): "is a ftp:// URL",
    }
    for args, message in cases.items():
        result = nb("submit", "--team", "team-a", *args)
        assert result.exit_code == 2 and message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1


HUNGRY = """\
import asyncio
import uvicorn
from nlpbench.api.tool import create_app
from nlpbench.cli.serve import build_annotator

app = create_app(build_annotator("date"))
hoard = []


async def hungry(scope, receive, send):
    if scope["type"] == "http" and scope["path"].startswith("/api/v1/text"):
        message = await receive()
        if b"{last}" in message.get("body", b""):  # a note seen only after validation: grow until stopped
            while True:
                hoard.append(b"x" * 50 * 2**20)
                await asyncio.sleep(0.05)

        async def replay():
            return message

        return await app(scope, replay, send)
    await app(scope, receive, send)


uvicorn.run(hungry, host="127.0.0.1", port=8080, log_level="warning")
"""


def test_a_command_runs_in_the_sandbox_and_its_output_is_kept_for_organisers(nb, dataset):
    command = f"{sys.executable} -m nlpbench serve -a date --port 8080 --log-level info"
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--command", command)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert len(data["results"][0]["reproducibility"]["commandSha256"]) == 64
    logs = json.loads(nb("submissions", "logs", submission, "--format", "json").stdout)
    output = logs["tool"]["output"]["content"]
    assert "POST /api/v1/textDateAnnotations" in output
    # started once for validation and annotation: one startup, and the validation's requests in the same log
    assert output.count("Started server process") == 1 and "GET /api/v1/ui" in output


def test_a_command_over_its_memory_limit_ends_failed_saying_so(nb, dataset, tmp_path):
    script = tool_folder(tmp_path) / "hungry.py"
    script.write_text(HUNGRY.replace("{last}", dataset[-1]))
    assert (
        nb("submissions", "queue", "default", "--tool-memory", "400", "--timeout", "5", "--retries", "1").exit_code == 0
    )
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--command", f"{sys.executable} {script}")
    run_worker(nb, "--runtime", str(script.parent))
    data = shown(nb, submission)
    assert (data["status"], data["reason"]) == ("FAILED", "the tool exceeded its memory limit of 400 MiB"), data[
        "reason"
    ]


def test_cancelled_while_annotating_the_worker_stops_at_its_next_heartbeat(nb, dataset, tool, db_url):
    assert nb("submissions", "queue", "default", "--concurrency", "1").exit_code == 0
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--tool", tool.url)
    tool.reset(delay=0.4, notes=None)
    opened = open_store(db_url)
    worker = Worker(opened, lease=0.9, poll=0.05)
    thread = threading.Thread(target=worker.run, kwargs={"until_idle": True})
    thread.start()
    deadline = time.monotonic() + 60
    while True:
        with opened.session(readonly=True) as session:
            row = session.get(Submission, int(submission))
            if row.status == "ANNOTATING" and row.notes_done >= 1:
                break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert nb("submissions", "cancel", submission).exit_code == 0
    thread.join(timeout=30)
    assert not thread.is_alive()
    opened.close()
    data = shown(nb, submission)
    assert data["status"] == "CANCELLED" and data["progress"]["done"] < len(dataset)
    assert [e["status"] for e in data["events"]][-1] == "CANCELLED" and data["results"] == []
