"""A queue's webhook, to a receiver on 127.0.0.1 that fails the first attempts, on SQLite and PostgreSQL.

Every byte the receiver gets is kept: no note's text (no 24 characters of one) and no canary a team put in its
prediction file is in any of them; each body is signed with the organisers' secret; a receiver that never
answers 2xx costs the worker nothing, and its answers' bodies are never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from nlpbench.platform import queue as queues
from nlpbench.platform import webhooks

SECRET = "a-secret-of-the-organisers-0123"
CANARY = "CANARY-Zq7Xw3-NOTE-TEXT"
WINDOW = 24


class Receiver:
    """What a receiver got: each request's bytes (request line, headers, body); it answers 503 to the first
    ``failing`` requests, then 204."""

    def __init__(self, failing: int):
        self.failing = failing
        self.received: list[tuple[bytes, dict[str, str], bytes]] = []
        self.lock = threading.Lock()

    def bodies(self) -> list[tuple[dict[str, str], dict]]:
        """The delivered ones (answered 204): headers and JSON body."""
        with self.lock:
            return [(headers, json.loads(body)) for _raw, headers, body in self.received[self.failing :]]


@contextmanager
def receiving(failing: int) -> Iterator[tuple[Receiver, str]]:
    got = Receiver(failing)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            with got.lock:
                got.received.append((self.raw_requestline + self.headers.as_bytes(), dict(self.headers), body))
                answer = 503 if len(got.received) <= got.failing else 204
            self.send_response(answer)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got, f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        server.shutdown()
        server.server_close()


def test_completions_reach_the_webhook_signed_retried_and_without_note_text(arena, tmp_path):
    with receiving(failing=2) as (got, url):
        said = arena.queue("--webhook", url, "--webhook-secret", SECRET)
        assert said.rstrip().endswith(f"webhook: {url} (signed)") and SECRET not in said
        perfect = json.dumps(arena.exported("open", tmp_path))
        scored = arena.submitted(dataset="open", predictions=perfect, predictionsName="p.json")
        canary = json.dumps([{"noteId": CANARY, "start": 0, "length": 3, "text": CANARY, "dateFormat": CANARY}])
        invalid = arena.submitted(dataset="open", predictions=canary, predictionsName=f"{CANARY}.json")
        started = time.monotonic()
        arena.work()
        assert time.monotonic() - started < 30
        ends = time.monotonic() + 30
        while len(got.bodies()) < 2 and time.monotonic() < ends:
            time.sleep(0.1)
        delivered = {body["submission"]: (headers, body) for headers, body in got.bodies()}
        assert sorted(delivered) == [scored, invalid], got.received
        assert len(got.received) == 4  # two failed attempts, then one delivery each
        for _raw, headers, body in got.received:
            mac = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
            assert headers["X-Nlpbench-Signature"] == f"sha256={mac}"
        deliveries: dict[str, set[bytes]] = {}
        for _raw, headers, body in got.received:  # a retry names its delivery and sends its body again
            deliveries.setdefault(headers["X-Nlpbench-Delivery"], set()).add(body)
        assert len(deliveries) == 2 and all(len(bodies) == 1 for bodies in deliveries.values())
    headers, body = delivered[scored]
    assert body["status"] == "SCORED" and body["team"] == "team-a" and body["task"] == "date"
    assert body["event"] == "submission.completed" and body["queue"] == "default" and body["challenge"] is None
    (score,) = body["scores"]
    assert score["profile"] == "standard" and score["value"] == 1.0
    assert score["low"] is not None and score["high"] is not None
    assert body["createdAt"].endswith("Z") and body["finishedAt"].endswith("Z")
    assert arena.shown(invalid, "organiser")["status"] == "INVALID"
    assert delivered[invalid][1]["status"] == "INVALID" and delivered[invalid][1]["scores"] == []
    assert set(body) == set(delivered[invalid][1])
    everything = b"".join(raw + body for raw, _headers, body in got.received)
    assert CANARY.encode() not in everything
    assert b"reason" not in everything
    for text in arena.note_texts("open"):
        windows = {text[i : i + WINDOW] for i in range(max(1, len(text) - WINDOW))}
        assert not any(window.encode() in everything for window in windows if window.strip())


def test_a_receiver_that_always_fails_is_tried_a_bounded_number_of_times_and_never_logged(caplog):
    body = json.dumps({"submission": 7, "note": CANARY}).encode()
    with receiving(failing=99) as (got, url), caplog.at_level(logging.WARNING, logger=webhooks.__name__):
        assert webhooks.deliver(url, SECRET, body, 7, wait=0.01) is False
    assert len(got.received) == webhooks.ATTEMPTS
    lines = [record.getMessage() for record in caplog.records]
    assert lines[0] == f"webhook of submission 7: attempt 1 of {webhooks.ATTEMPTS} failed (status 503)"
    assert lines[-1] == "webhook of submission 7: not delivered"
    assert not any(CANARY in line for line in lines)


def test_a_webhook_is_an_http_url_and_a_secret_has_sixteen_characters(arena):
    bad = arena.nb("submissions", "queue", "default", "--webhook", "ftp://example.org/x")
    assert bad.exit_code == 2 and bad.stderr.strip().endswith("not an http(s) URL with a host")
    short = arena.nb("submissions", "queue", "default", "--webhook-secret", "short")
    assert short.exit_code == 2 and "16 to 500 printable characters" in short.stderr
    assert (
        arena.queue("--webhook", "http://user:pw@127.0.0.1:9/h")
        .rstrip()
        .endswith("webhook: http://127.0.0.1:9/h (unsigned)")
    )
    assert arena.queue("--webhook", "").rstrip().endswith("webhook: none")


def test_a_submission_failed_at_its_claim_is_posted_too_and_a_full_worker_sends_nothing_more(arena, tmp_path, caplog):
    with receiving(failing=0) as (got, url):
        arena.queue("--webhook", url, "--max-attempts", "1")
        text = json.dumps(arena.exported("open", tmp_path))
        submission = arena.submitted(dataset="open", predictions=text, predictionsName="p.json")
        assert queues.claim(arena.store, "default", "a-worker-that-dies", 0.01) == submission
        time.sleep(0.05)  # its lease has expired: the next claim finds it has stopped 1 worker
        arena.work()
        ends = time.monotonic() + 20
        while not got.bodies() and time.monotonic() < ends:
            time.sleep(0.05)
        ((headers, body),) = got.bodies()
        assert body["submission"] == submission and body["status"] == "FAILED"
        assert "X-Nlpbench-Signature" not in headers  # no secret: unsigned
        assert arena.shown(submission, "organiser")["reason"] == "stopped 1 worker"
        assert b"stopped" not in got.received[0][2]
        full = webhooks.slots()
        for _ in range(webhooks.IN_FLIGHT):
            assert full.acquire(blocking=False)
        with caplog.at_level(logging.ERROR, logger=webhooks.__name__):
            assert webhooks.deliver_later(arena.store, submission, full) is None
        assert caplog.records[-1].getMessage() == (
            f"webhook of submission {submission}: not sent, {webhooks.IN_FLIGHT} deliveries in flight already"
        )
        assert len(got.received) == 1


def test_a_submission_cancelled_while_waiting_is_posted_by_whoever_cancelled_it(arena, tmp_path):
    with receiving(failing=1) as (got, url):
        arena.queue("--webhook", url, "--webhook-secret", SECRET)
        text = json.dumps(arena.exported("open", tmp_path))
        by_team = arena.submitted(dataset="open", predictions=text, predictionsName="p.json")
        by_organiser = arena.submitted(dataset="open", predictions=text, predictionsName="p.json")
        cancelled = arena.call("POST", f"/submissions/{by_team}/cancel")  # through the platform API, by its team
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED"
        said = arena.nb("submissions", "cancel", str(by_organiser))  # the organisers' command line
        assert said.exit_code == 0 and said.stdout.strip() == f"submission {by_organiser}: CANCELLED"
        ends = time.monotonic() + 30
        while len(got.bodies()) < 2 and time.monotonic() < ends:
            time.sleep(0.05)
        delivered = {body["submission"]: (headers, body) for headers, body in got.bodies()}
        assert sorted(delivered) == [by_team, by_organiser], got.received
        for _headers, body in delivered.values():
            assert body["status"] == "CANCELLED" and body["event"] == "submission.completed"
            assert body["scores"] == [] and body["startedAt"] is None and body["finishedAt"].endswith("Z")
        for _raw, headers, body in got.received:
            assert (
                headers["X-Nlpbench-Signature"]
                == f"sha256={hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()}"
            )
        assert b"reason" not in b"".join(body for *_, body in got.received)  # not "cancelled by team team-a"
        arena.work()  # nothing waits: no worker claims either of them, so none posts them again
        assert len(got.received) == 3  # one failed attempt, then one delivery each
