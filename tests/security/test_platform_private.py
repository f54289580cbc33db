"""A team probes a private dataset with its key: per-note rows, a note's length through a reason, what its tool
read through the way it fails, a queue of its own to escape the quota; on SQLite and PostgreSQL.

On a private dataset a team reads aggregate scores only; once its tool was sent notes, a failure is told by
its class (the whole line is the organisers'); queues are the organisers' to open, two submissions per team
and week by default.
"""

from __future__ import annotations

import json
import re

import pytest

from nlpbench.api.tool import create_app
from nlpbench.platform.views import PRIVATE_WARNINGS
from tests.platform.arena import host_of, problem
from tests.platform.conftest import arena, nb, served_tool, tool  # noqa: F401
from tests.store.backends import db_url  # noqa: F401
from tests.toolkit import RegexPhi, served

PROBE_NOTE = "awesome-note"
GOLD = "-DOCSTART- O\n\nJohn B-PER\nSmith I-PER\n\n-DOCSTART- O\n\nAcme B-ORG\nhired O\n"


def test_per_document_rows_of_a_private_dataset_are_the_organisers(arena, tmp_path):  # noqa: F811
    for dataset in ("notes", "open"):
        predictions = json.dumps(arena.exported(dataset, tmp_path))
        # on the private dataset only the organisers may give predictions (the team never saw the notes)
        submission = arena.submitted("organiser" if dataset == "notes" else "team", team="team-a", **(
            {"dataset": dataset, "predictions": predictions, "predictionsName": "gold.json"}
        ))  # fmt: skip
        arena.work()
        data = arena.shown(submission)
        assert data["status"] == "SCORED", data["reason"]
        (result,) = data["results"]
        assert result["scores"]["date"] and result["perDocumentRows"] > 0  # aggregates, and how many rows
        documents = arena.call("GET", f"/submissions/{submission}/documents")
        organisers = arena.call("GET", f"/submissions/{submission}/documents", "organiser")
        assert len(organisers.json()["perDocument"]) == result["perDocumentRows"]
        if dataset == "notes":
            problem(documents, 403, "the dataset is private: its team sees aggregate scores only")
        else:
            assert documents.json() == organisers.json()


def test_the_scorers_warnings_name_private_gold_documents_and_are_withheld_from_the_team(arena, tmp_path):  # noqa: F811
    gold, predictions = tmp_path / "gold.conll", tmp_path / "pred.conll"
    gold.write_text(GOLD)
    predictions.write_text(GOLD.split("\n\n-DOCSTART-")[0])  # the second document left out
    assert arena.nb("submissions", "gold", "ner", "conll-demo", "--file", f"gold={gold}").exit_code == 0  # private
    submission = arena.submitted(task="ner", dataset="conll-demo", predictions=predictions.read_text())
    arena.work()
    organisers = arena.shown(submission, "organiser")["results"][0]["warnings"]
    assert organisers == ["1 documents only in the gold, scored against nothing: 2"]
    assert arena.shown(submission)["results"][0]["warnings"] == [PRIVATE_WARNINGS]
    problem(arena.call("GET", f"/submissions/{submission}/documents"), 403)


def test_a_prediction_file_cannot_probe_a_private_notes_length(arena, tmp_path):  # noqa: F811
    records = arena.exported("notes", tmp_path)
    records[0]["textDateAnnotations"] = [{"start": 500, "length": 4, "text": "2020", "dateFormat": "YYYY"}]
    body = {"predictions": json.dumps(records), "predictionsName": "probe.json"}
    problem(arena.submit(**body), 403, "not by a team's prediction file")  # INVALID then SCORED told the length
    on_public = arena.exported("open", tmp_path)
    on_public[0]["textDateAnnotations"] = [{"start": 10**6, "length": 4, "text": "2020", "dateFormat": "YYYY"}]
    submission = arena.submitted(dataset="open", predictions=json.dumps(on_public), predictionsName="probe.json")
    arena.work()
    reason = arena.shown(submission)["reason"]
    assert re.fullmatch(r"probe.json: note \S+: date at 1000000-1000004 ends beyond the note", reason), reason


class Leaking:
    """A tool that, sent a note of the dataset, fails in a way that spells the note: its first word as a
    content type, its length as a body size and as an offset, its position as the note it fails on."""

    def __init__(self, how: str):
        self.app, self.how = create_app(RegexPhi()), how

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/api/v1/text"):
            return await self.app(scope, receive, send)
        message = await receive()
        note = json.loads(message["body"])["note"]
        if note["identifier"] == PROBE_NOTE:
            return await self.app(scope, _replay(message), send)
        word = re.sub(r"[^a-z]", "", note["text"].split()[0].lower()) or "x"
        if self.how == "content type":
            body, status = b"x" * len(note["text"]), 500
            headers = [(b"content-type", f"application/x-{word}".encode())]
        else:  # an annotation ending past the note, at an offset the tool chose
            body, status = json.dumps({"textDateAnnotations": [_past_end(note["text"])]}).encode(), 200
            headers = [(b"content-type", b"application/json")]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _past_end(text: str) -> dict:
    return {"start": len(text) * 1000 + 7, "length": 1, "text": "x", "dateFormat": "", "confidence": 50.0}


def _replay(message):
    async def receive():
        return message

    return receive


@pytest.mark.parametrize("how", ["content type", "offset"])
def test_what_a_team_tool_read_does_not_come_back_through_the_way_it_fails(arena, how):  # noqa: F811
    texts = arena.note_texts()
    with served(Leaking(how)) as url:
        arena.queue("--tool-host", host_of(url))  # the organisers vouch for the host: still the team's tool
        submission = arena.submitted(toolUrl=url)
        arena.work()
    data = arena.shown(submission)
    assert (data["status"], data["reason"]) == ("INVALID", "validation notes: the tool failed on them")
    said = json.dumps(data)
    for text in texts:
        assert f"({len(text)} chars)" not in said and str(len(text)) not in data["reason"]
    assert "application/x-" not in said and "synth" not in data["reason"]
    detail = arena.logs(submission)["reason"]  # the organisers read the whole line
    assert ("application/x-" if how == "content type" else "beyond the note") in detail


def test_the_organisers_own_tool_url_is_told_in_full(arena, tool):  # noqa: F811
    tool.reset("past_end", notes=None)
    submission = arena.submitted("organiser", team="team-a", toolUrl=tool.url)
    arena.work()
    reason = arena.shown(submission)["reason"]
    assert re.search(r"ends at \d+, beyond the note \(\d+ chars\)$", reason), reason


def test_a_team_cannot_open_a_queue_by_naming_it(arena, tool):  # noqa: F811
    problem(arena.submit(dataset="open", queue="mine", toolUrl="http://1.1.1.1/"), 404, "no queue 'mine'")
    problem(arena.submit(dataset="open", queue="../x", toolUrl="http://1.1.1.1/"), 400, "is not a name")
    assert arena.call("GET", "/submissions?queue=mine", "organiser").json()["submissions"] == []
    assert arena.submitted("organiser", team="team-a", queue="organisers", toolUrl=tool.url)  # opened by naming
    cli = arena.nb("submit", "--team", "t", "--task", "date", "--dataset", "notes", "-q", "cli", "--tool", tool.url)
    assert cli.exit_code == 0, cli.stderr
    assert arena.submitted(queue="cli", dataset="open", toolUrl="http://1.1.1.1/")  # now it exists


def test_a_new_queue_takes_two_submissions_a_team_and_week(arena):  # noqa: F811
    said = arena.nb("submissions", "queue", "weekly").stdout
    assert "2 per team and task per week" in said
    body = {"dataset": "open", "queue": "weekly", "toolUrl": "http://1.1.1.1/"}
    assert arena.submitted(**body) and arena.submitted(**body)
    problem(arena.submit(**body), 429, "team team-a has used its 2 submissions of date in queue weekly this week")
    assert arena.submitted("other", **body)  # another team's places are its own
