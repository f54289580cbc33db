"""A tool that misbehaves on purpose: ASGI middleware in front of a real tool app, served on 127.0.0.1.

Every fault echoes the note's text where a careless client would print it (a
problem ``detail``, an HTML page, a non-JSON body, an annotation's ``text``),
so that a test can plant a canary in the notes and look for it everywhere.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from nlpbench.api.tool import create_app
from tests.toolkit import RegexPhi, serving

if TYPE_CHECKING:
    import uvicorn

#: Faults that end a note's request in failure (after any retries).
FAILING = ("400", "422", "500", "503", "html", "not_json", "schema", "past_end", "huge", "many", "hang", "drip",
           "broken")  # fmt: skip
PROBE = "awesome-note"
#: The ``--timeout`` the fault tests give a tool, and how long a ``hang`` or ``drip`` answer lasts: a healthy
#: answer comes well within the timeout on a loaded machine too (at 0.5 s the probe note's did not, twice, with
#: two suites running at once), and a hanging one stays silent well past it.
TIMEOUT = 3
HANG_SECONDS = 7.0
STARTED = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}


class FaultyTool:
    """``FaultyTool(app)``; ``reset(fault=…, notes={…}, times=N)`` makes the next answers for those notes go wrong.

    ``notes`` are the note identifiers hit (default: every note but the probe
    note of validation; ``None``: every request); ``times`` how many answers
    go wrong before the tool behaves again; ``fail_note`` gets a 500 whatever
    the fault. ``delay`` slows every annotation request. Counts requests and
    the most in flight at once. ``many``: how many (valid) annotations the fault ``many`` answers per request.
    """

    def __init__(self, app):
        self.app = app
        self.url = ""
        self.server: uvicorn.Server | None = None
        self.reset()

    def reset(
        self,
        fault: str | None = None,
        *,
        notes: Collection[str] | None = (),
        times: int = 10**9,
        delay: float = 0.0,
        hang_seconds: float = HANG_SECONDS,
        huge_bytes: int = 2 * 2**20,
        many: int = 600,
        fail_note: str | None = None,
    ) -> None:
        self.fault, self.notes, self.times, self.delay = fault, notes, times, delay
        self.fail_note = fail_note
        self.hang_seconds, self.huge_bytes, self.many = hang_seconds, huge_bytes, many
        self.requests = self.in_flight = self.max_in_flight = 0
        self.seen: list[str] = []

    def settle(self, seconds: float = 10.0) -> None:
        """Wait until no request is being answered and no connection is open.

        A client that gave up may leave a request behind, and one it cancelled
        may still be in the socket when it closes: the server reads it (and
        counts it) before it sees the connection end, so waiting for no open
        connection waits for every request already sent.
        """
        deadline = time.monotonic() + seconds
        while self._busy() and time.monotonic() < deadline:
            time.sleep(0.01)

    def _busy(self) -> bool:
        state = self.server.server_state if self.server is not None else None
        return bool(self.in_flight or (state is not None and (state.connections or state.tasks)))

    def _hit(self, note_id: str) -> bool:
        if self.fault is None or self.times <= 0:
            return False
        hit = note_id != PROBE if self.notes == () else self.notes is None or note_id in self.notes
        if hit:
            self.times -= 1
        return hit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/api/v1/text"):
            return await self.app(scope, receive, send)
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            body = b""
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":  # the client gave up before sending it all
                    return None
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            note = json.loads(body)["note"]
            self.seen.append(note["identifier"])
            await asyncio.sleep(self.delay)
            array = scope["path"].rsplit("/", 1)[1]
            if note["identifier"] == self.fail_note:
                return await self._misbehave("500", note, array, scope, body, send)
            if self._hit(note["identifier"]):
                return await self._misbehave(self.fault, note, array, scope, body, send)
            return await self.app(scope, _replay(body), send)
        finally:
            self.in_flight -= 1

    async def _misbehave(self, fault, note, array, scope, body, send):
        text = note["text"]
        if fault in ("400", "422", "500", "503"):
            problem = {"title": text, "status": int(fault), "detail": f"cannot annotate {text!r}"}
            return await _send(send, int(fault), json.dumps(problem).encode(), "application/problem+json")
        if fault == "html":
            return await _send(send, 200, f"<html><body><p>{text}</p></body></html>".encode(), "text/html")
        if fault == "not_json":
            return await _send(send, 200, f"annotated: {text}".encode(), "application/json")
        if fault == "schema":
            wrong = {array: [{"start": "0", "length": 3, "text": text, "confidence": 90.0}]}
            return await _send(send, 200, json.dumps(wrong).encode(), "application/json")
        if fault in ("past_end", "mismatch", "random"):
            answer = json.loads(await _answer(self.app, scope, body))
            if fault == "past_end":
                answer[array].append({"start": len(text) - 2, "length": 10, "text": text, **_subtype(array)})
            elif fault == "mismatch" and answer[array]:
                answer[array][0]["text"] = text  # the whole note, where the span covers a few characters
            elif fault == "random":
                answer[array] = [a for a in answer[array] if random.random() < 0.5]
            return await _send(send, 200, json.dumps(answer).encode(), "application/json")
        if fault == "huge":
            item = json.dumps({"start": 0, "length": 1, "text": text, "confidence": 1.0}).encode()
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": f'{{"{array}": ['.encode(), "more_body": True})
            sent = 0
            while sent < self.huge_bytes:
                chunk = b",".join([item] * 200) + b","
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                sent += len(chunk)
            return await send({"type": "http.response.body", "body": item + b"]}"})
        if fault == "many":  # ``many`` valid annotations: spans of 1 to 4 characters, from every place of the note
            spans = [(i % (len(text) - 4), 1 + i % 4) for i in range(self.many)]
            items = [{"start": s, "length": n, "text": text[s : s + n], **_subtype(array)} for s, n in spans]
            return await _send(send, 200, json.dumps({array: items}).encode(), "application/json")
        if fault == "hang":
            await asyncio.sleep(self.hang_seconds)
            return await _send(send, 200, json.dumps({array: []}).encode(), "application/json")
        if fault == "drip":  # a byte at a time over hang_seconds: never silent for long, never done in time
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            for byte in json.dumps({array: [], "padding": text}).encode()[:12]:
                await send({"type": "http.response.body", "body": bytes([byte]), "more_body": True})
                await asyncio.sleep(self.hang_seconds / 12)
            return await send({"type": "http.response.body", "body": b""})
        if fault == "broken":  # promise 10 000 bytes, send a few, hang up
            headers = [(b"content-type", b"application/json"), (b"content-length", b"10000")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            return await send({"type": "http.response.body", "body": text.encode()[:20], "more_body": True})
        raise ValueError(f"unknown fault {fault!r}")


def _subtype(array: str) -> dict:
    extra = {"textLocationAnnotations": {"locationType": "city"}, "textIdAnnotations": {"idType": "other"}}
    extra["textContactAnnotations"] = {"contactType": "phone"}
    return {"confidence": 50.0, **extra.get(array, {})}


async def _answer(app, scope, body: bytes) -> bytes:
    """What the real tool answers to ``body``."""
    chunks: list[bytes] = []

    async def keep(message):
        if message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, _replay(body), keep)
    return b"".join(chunks)


def _replay(body: bytes):
    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _send(send, status: int, body: bytes, content_type: str) -> None:
    headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@contextmanager
def faulty(annotator=None) -> Iterator[FaultyTool]:
    """A :class:`FaultyTool` in front of ``annotator`` (the test regex annotator by default), served on 127.0.0.1."""
    tool = FaultyTool(create_app(annotator or RegexPhi()))
    with serving(tool) as (url, server):
        tool.url, tool.server = url, server
        yield tool
