"""The runner against live tools on 127.0.0.1: order, concurrency, retries, timeouts, resume, bad tools."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import signal
import threading
from contextlib import closing

import pytest

from nlpbench.api.tool import create_app, create_deidentifier_app
from nlpbench.model import Document
from nlpbench.runner.client import RetryPolicy, ToolError, note_identifier
from nlpbench.runner.run import AnnotationRun, new_event_loop
from tests.toolkit import DatesOnly, RegexPhi, local_cluster, served

FAST = RetryPolicy(retries=3, backoff=0.01)
TEXTS = [
    "On 12/26/2020, Ms. Chloe Price met with Dr. Prescott in Seattle.",
    "Mary Williamson (SSN 123-45-6789) came back on March 3, 2021.",
    "Call (206) 555-0101 or write to mary@example.org before 1/2/2021.",
    "No PHI in this one.",
]


def notes(count: int = 12) -> list[Document]:
    return [
        Document(f"note-{i:03d}", TEXTS[i % len(TEXTS)], metadata={"patientId": f"patient-{i % 3}"})
        for i in range(count)
    ]


class Misbehaving:
    """ASGI middleware in front of a tool: counts requests in flight, and fails as a test asks."""

    def __init__(self, app):
        self.app = app
        self.reset()

    def reset(self, *, delay=0.0, fail_503=0, hang=0, hang_seconds=2.0, invalid_json=False, body=None, fail_note=None):
        self.delay, self.fail_503, self.hang, self.hang_seconds = delay, fail_503, hang, hang_seconds
        self.invalid_json, self.body, self.fail_note = invalid_json, body, fail_note
        self.in_flight = self.max_in_flight = self.annotation_requests = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/api/v1/text"):
            return await self.app(scope, receive, send)
        self.annotation_requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        finished = False

        async def send_then_leave(message):
            # Leave the count before the last byte goes out: once the client has its answer it may
            # reset the counters, and a request counted out after that would corrupt the next test.
            nonlocal finished
            if message["type"] == "http.response.body" and not message.get("more_body") and not finished:
                finished = True
                self.in_flight -= 1
            await original_send(message)

        original_send, send = send, send_then_leave
        try:
            await asyncio.sleep(self.delay)
            if self.fail_503 > 0:
                self.fail_503 -= 1
                return await self._send(send, 503, b'{"title": "Service Unavailable", "status": 503}')
            if self.hang > 0:
                self.hang -= 1
                await asyncio.sleep(self.hang_seconds)
            if self.invalid_json:
                return await self._send(send, 200, b'{"textDateAnnotations": [')
            if self.body is not None:
                return await self._send(send, 200, json.dumps(self.body).encode())
            if self.fail_note is not None:
                request = await _whole_request(receive)
                if self.fail_note.encode() in request["body"]:
                    return await self._send(send, 500, b'{"title": "Internal error", "status": 500, "detail": "boom"}')
                return await self.app(scope, _replay(request), send)
            return await self.app(scope, receive, send)
        finally:
            if not finished:
                self.in_flight -= 1

    @staticmethod
    async def _send(send, status, body):
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": body})


async def _whole_request(receive) -> dict:
    """The request's body as one message, however many it came in."""
    body, message = b"", {"more_body": True}
    while message.get("more_body"):
        message = await receive()
        body += message.get("body", b"")
    return {"type": "http.request", "body": body, "more_body": False}


def _replay(message):
    async def receive():
        return message

    return receive


@pytest.fixture(scope="module")
def tool():
    middleware = Misbehaving(create_app(RegexPhi()))
    with served(middleware) as url:
        middleware.url = url
        yield middleware


@pytest.fixture(autouse=True)
def _reset(tool):
    tool.reset()


def expected(note: Document):
    return [(a.label, a.start, a.end, a.text, a.confidence, a.attributes) for a in RegexPhi().annotate(note)]


def found(document: Document):
    return sorted((a.label, a.start, a.end, a.text, a.confidence, a.attributes) for a in document.annotations)


def test_every_note_in_input_order_with_the_tools_annotations(tool):
    run = AnnotationRun(tool.url, concurrency=4, retry=FAST)
    given = notes(20)
    documents = run.run(given)
    assert [d.id for d in documents] == [n.id for n in given]
    for note, document in zip(given, documents, strict=True):
        assert found(document) == sorted(expected(note))
    assert run.check.tool.name == "regex-phi"
    assert run.check.labels == ("date", "person_name", "location", "id", "contact")
    assert (run.stats.notes, run.stats.retries) == (20, 0)
    assert run.stats.annotations == sum(len(expected(n)) for n in given)


def test_requests_in_flight_never_exceed_the_concurrency(tool):
    tool.reset(delay=0.03)
    run = AnnotationRun(tool.url, concurrency=3, retry=FAST)
    run.run(notes(8))
    assert tool.max_in_flight == 3
    tool.reset(delay=0.03)
    AnnotationRun(tool.url, concurrency=1, retry=FAST).run(notes(2))
    assert tool.max_in_flight == 1


def test_503_is_retried_with_backoff(tool):
    tool.reset(fail_503=4)
    run = AnnotationRun(tool.url, concurrency=2, retry=FAST)
    documents = run.run(notes(4))
    assert [found(d) for d in documents] == [sorted(expected(n)) for n in notes(4)]
    assert run.stats.retries == 4


def test_503_beyond_the_retries_stops_the_run(tool):
    tool.reset(fail_503=100)
    with pytest.raises(ToolError, match=r"HTTP 503 Service Unavailable.*\(3 attempts\)"):
        AnnotationRun(tool.url, retry=RetryPolicy(retries=2, backoff=0.01)).run(notes(2))


def test_a_timeout_is_retried(tool):
    tool.reset(hang=1, hang_seconds=1.0)
    run = AnnotationRun(tool.url, concurrency=1, timeout=0.3, retry=FAST)
    documents = run.run(notes(1))
    assert found(documents[0]) == sorted(expected(notes(1)[0]))
    assert run.stats.retries == 1


def test_timeouts_beyond_the_retries_name_the_request(tool):
    tool.reset(hang=100, hang_seconds=0.5)
    with pytest.raises(ToolError, match=r"POST /text\w+Annotations for note awesome-note: no answer within 0.2 s"):
        AnnotationRun(tool.url, timeout=0.2, retry=RetryPolicy(retries=1, backoff=0.01)).run(notes(1))


def test_a_tool_that_returns_invalid_json_gets_a_clear_error(tool):
    tool.reset(invalid_json=True)
    with pytest.raises(ToolError, match=r"the response is not JSON \(HTTP 200 OK, application/json, 25 bytes\)$"):
        AnnotationRun(tool.url, retry=FAST).run(notes(1))


def test_a_response_outside_the_schema_gets_a_clear_error(tool):
    tool.reset(body={"textDateAnnotations": [{"start": "3", "length": 10, "text": "12/26/2020", "confidence": 95}]})
    with pytest.raises(
        ToolError, match=r"does not follow the 1.2.0 TextDateAnnotationResponse schema: textDateAnnotations.0.start"
    ):
        AnnotationRun(tool.url, labels=("date",), retry=FAST).run(notes(1))


def test_an_unreachable_tool(tool):
    with served(create_app(RegexPhi())) as url:
        pass  # the server is gone: nothing listens on its port any more
    with pytest.raises(ToolError, match="cannot reach"):
        AnnotationRun(url, retry=RetryPolicy(retries=1, backoff=0.01)).run(notes(1))


def test_resume_from_the_checkpoint(tool, tmp_path):
    checkpoint = tmp_path / "run.checkpoint.jsonl"
    given = notes(12)
    tool.reset(fail_note="note-007")
    with pytest.raises(
        ToolError, match=r"for note note-007: HTTP 500 Internal Server Error, application/json, 60 bytes$"
    ):
        AnnotationRun(tool.url, concurrency=1, retry=FAST, checkpoint=checkpoint).run(given)
    lines = checkpoint.read_text().splitlines()
    assert json.loads(lines[0]) == {
        "checkpoint": "nlpbench-annotate-checkpoint",
        "format": 2,
        "url": f"{tool.url}/api/v1",
        "tool": "regex-phi",
        "version": "1.0.0",
        "type": "nlpsandbox:phi-annotator",
        "labels": ["date", "person_name", "location", "id", "contact"],
    }
    records = [json.loads(line) for line in lines[1:]]
    finished = [record["id"] for record in records]
    assert finished == [f"note-{i:03d}" for i in range(7)]
    assert records[0]["sha256"] == hashlib.sha256(given[0].text.encode()).hexdigest()

    tool.reset()
    progress = []
    resumed = AnnotationRun(
        tool.url, concurrency=3, retry=FAST, checkpoint=checkpoint, on_progress=lambda i, r: progress.append((i, r))
    )
    documents = resumed.run(given)
    assert (resumed.stats.resumed, resumed.stats.notes) == (7, 12)
    # counted where they are sent (the tool may yet receive a request of the first run, cancelled while being sent):
    # GET /healthCheck and /tool, then five types of the probe note and of the 5 notes left
    assert (resumed.stats.requests, resumed.stats.retries) == (2 + 5 * (1 + 5), 0)
    assert sorted(i for i, was_resumed in progress if was_resumed) == finished
    uninterrupted = AnnotationRun(tool.url, retry=FAST).run(given)
    assert [(d.id, found(d)) for d in documents] == [(d.id, found(d)) for d in uninterrupted]


def test_a_line_cut_short_is_sent_again(tool, tmp_path):
    checkpoint = tmp_path / "cp.jsonl"
    AnnotationRun(tool.url, retry=FAST, checkpoint=checkpoint).run(notes(3))
    text = checkpoint.read_text()
    checkpoint.write_text(text[: len(text) - 20])  # the last note's line, cut
    run = AnnotationRun(tool.url, retry=FAST, checkpoint=checkpoint)
    with pytest.warns(UserWarning, match="line 4 was cut short"):
        documents = run.run(notes(3))
    assert run.stats.resumed == 2 and [found(d) for d in documents] == [sorted(expected(n)) for n in notes(3)]
    assert len(checkpoint.read_text().splitlines()) == 4


def test_a_checkpoint_of_another_tool_is_refused(tool, tmp_path):
    from nlpbench.errors import InputError

    checkpoint = tmp_path / "cp.jsonl"
    AnnotationRun(tool.url, labels=("date",), retry=FAST, checkpoint=checkpoint).run(notes(2))
    refused = (
        r"made for regex-phi 1\.0\.0 at http\S+ for date, not regex-phi 1\.0\.0 at http\S+ for date, id; --restart"
    )
    with pytest.raises(InputError, match=refused):
        AnnotationRun(tool.url, labels=("date", "id"), retry=FAST, checkpoint=checkpoint).run(notes(2))


@pytest.mark.parametrize("when", ["as a note finishes", "while the caller holds a note"])
def test_a_ctrl_c_is_never_lost(tool, tmp_path, when):
    """The SIGINT comes on the loop's last turn of a step (a note's progress is reported there), or between two
    steps: either way the run stops with :class:`KeyboardInterrupt` and keeps what finished (the first went
    unseen once, and a command went on with its notes)."""
    assert threading.current_thread() is threading.main_thread()  # where signals are handled
    checkpoint, given = tmp_path / "run.checkpoint.jsonl", notes(12)

    def progress(note_id, _resumed):
        if when == "as a note finishes" and note_id == "note-002":
            os.kill(os.getpid(), signal.SIGINT)

    run = AnnotationRun(tool.url, concurrency=1, retry=FAST, checkpoint=checkpoint, on_progress=progress)
    received = []
    with pytest.raises(KeyboardInterrupt), closing(run.iterate(given)) as annotated:
        for document in annotated:
            received.append(document.id)
            if when == "while the caller holds a note" and document.id == "note-002":
                os.kill(os.getpid(), signal.SIGINT)
    assert len(received) <= 3
    finished = [json.loads(line)["id"] for line in checkpoint.read_text().splitlines()[1:]]
    assert finished[:3] == ["note-000", "note-001", "note-002"] and len(finished) < len(given)


def test_only_the_types_asked_for(tool):
    run = AnnotationRun(tool.url, labels=("id", "contact"), retry=FAST)
    documents = run.run(notes(4))
    assert {a.label for d in documents for a in d.annotations} == {"id", "contact"}
    assert tool.annotation_requests == 2 * 5


def test_what_a_tool_does_not_annotate_is_refused():
    with served(create_app(DatesOnly())) as url:
        with pytest.raises(ToolError, match="a nlpsandbox:date-annotator does not annotate location"):
            AnnotationRun(url, labels=("date", "location"), retry=FAST).run(notes(1))
        assert {a.label for d in AnnotationRun(url, retry=FAST).run(notes(4)) for a in d.annotations} == {"date"}
    deidentifier = served(create_deidentifier_app(RegexPhi()))
    with deidentifier as url, pytest.raises(ToolError, match="is a nlpsandbox:phi-deidentifier, not an annotator"):
        AnnotationRun(url, retry=FAST).run(notes(1))


def test_note_ids_the_schema_refuses_are_sent_as_valid_ones(tool):
    odd = [Document("Note_1.txt", TEXTS[0], metadata={"patientId": "P 7"}), Document("x", TEXTS[1])]
    documents = AnnotationRun(tool.url, retry=FAST).run(odd)
    assert [d.id for d in documents] == ["Note_1.txt", "x"]
    assert found(documents[0]) == sorted(expected(odd[0]))
    assert note_identifier("Note_1.txt").startswith("note-1-txt-")
    assert note_identifier("note-1") == "note-1"
    assert note_identifier("Note_1.txt") != note_identifier("note 1 txt")


@pytest.fixture(scope="module")
def dask_scheduler():
    pytest.importorskip("distributed")
    with local_cluster(n_workers=2, threads_per_worker=1, processes=True) as cluster:
        yield cluster.scheduler_address


def test_the_dask_executor_gives_what_the_local_one_gives(tool, dask_scheduler, tmp_path):
    given = notes(10)
    checkpoint = tmp_path / "dask.jsonl"
    AnnotationRun(tool.url, retry=FAST, checkpoint=checkpoint).run(given[:3])  # three notes already finished
    tool.reset(fail_503=2)
    run = AnnotationRun(
        tool.url, concurrency=2, retry=FAST, checkpoint=checkpoint, scheduler=dask_scheduler, batch_size=3
    )
    documents = run.run(given)
    assert [(d.id, found(d)) for d in documents] == [(n.id, sorted(expected(n))) for n in given]
    assert (run.stats.resumed, run.stats.notes) == (3, 10)
    assert run.stats.retries == 2  # counted on the workers, summed on the driver
    assert tool.annotation_requests == 5 * (1 + 7) + 2
    assert len(checkpoint.read_text().splitlines()) == 1 + 10


def test_a_tool_error_on_a_dask_worker_stops_the_run(tool, dask_scheduler):
    tool.reset(fail_note="note-004")
    with pytest.raises(ToolError, match="for note note-004: HTTP 500"):
        AnnotationRun(tool.url, retry=FAST, scheduler=dask_scheduler, batch_size=2).run(notes(6))


def test_an_unreachable_scheduler():
    with served(create_app(RegexPhi())) as url, pytest.raises(ToolError, match="cannot reach the Dask scheduler"):
        pytest.importorskip("distributed")
        AnnotationRun(url, timeout=1, retry=FAST, scheduler="tcp://127.0.0.1:9").run(notes(1))


@pytest.mark.parametrize("executor", ["local", "dask"])
def test_annotations_whose_text_differs_from_the_note_are_kept_with_the_notes_text_and_reported(
    tool, tmp_path, request, executor
):
    """The notes are written with their own text, and not checkpointed as finished: a rerun asks the tool again."""
    scheduler = request.getfixturevalue("dask_scheduler") if executor == "dask" else None
    tool.reset(body={"textDateAnnotations": [{"start": 3, "length": 10, "text": "2020-12-26", "confidence": 95}]})
    checkpoint = tmp_path / "cp.jsonl"
    run = AnnotationRun(tool.url, labels=("date",), retry=FAST, checkpoint=checkpoint, scheduler=scheduler)
    given = notes(2)
    documents = run.run(given)
    assert len(checkpoint.read_text().splitlines()) == 1  # the header alone
    assert [(a.start, a.end, a.text) for a in documents[0].annotations] == [(3, 13, "12/26/2020")]
    assert [(a.start, a.end, a.text) for a in documents[1].annotations] == [(3, 13, given[1].text[3:13])]
    assert run.stats.text_mismatches == 2
    assert run.stats.warnings == [
        "2 annotations whose text is not the note's text at their offsets; the note's text is kept (first: "
        "POST /textDateAnnotations for note note-000: textDateAnnotations[0]: start 3, length 10: a text of 10 chars); "
        "2 notes with them are not checkpointed, a rerun asks the tool again"
    ]


def test_notes_of_many_annotations_wait_in_the_checkpoint_and_come_back_the_same(tool, tmp_path, monkeypatch):
    given = notes(12)
    in_memory = AnnotationRun(tool.url, concurrency=4, retry=FAST).run(given)
    monkeypatch.setattr("nlpbench.runner.run.HELD_ANNOTATIONS", 0)  # every note with an annotation waits on disk
    tool.reset(delay=0.01)
    through_disk = AnnotationRun(tool.url, concurrency=4, retry=FAST, checkpoint=tmp_path / "cp.jsonl").run(given)
    assert [(d.id, found(d)) for d in through_disk] == [(d.id, found(d)) for d in in_memory]


def test_errors_nobody_awaited_are_logged_by_type_and_never_quoted(caplog):
    # anyio's cancelled connect sets a cancelled future's result (InvalidStateError): a debug line; any other
    # error nobody awaited is a warning, named by its type, never by a message that may hold a tool's bytes
    loop = new_event_loop()
    cancelled = loop.create_future()
    cancelled.cancel()

    def failing() -> None:
        raise ValueError(SECRET_RESPONSE)

    caplog.set_level(logging.DEBUG, logger="nlpbench.runner.run")
    try:
        loop.call_soon(cancelled.set_result, None)
        loop.call_soon(failing)
        loop.run_until_complete(asyncio.sleep(0.01))
    finally:
        loop.close()
    said = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "nlpbench.runner.run"]
    assert said == [
        ("DEBUG", "event loop: an error in a callback (InvalidStateError)"),
        ("WARNING", "event loop: an error nobody awaited (ValueError)"),
    ]
    assert SECRET_RESPONSE not in caplog.text


SECRET_RESPONSE = "Ms. Chloe Price, 12/26/2020"
