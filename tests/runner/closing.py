"""A tool server that closes every kept-alive connection after one answer, without ``Connection: close``.

This is how uWSGI's HTTP router treats the NLP Sandbox's example tools
(unbit/uwsgi#2133), made deterministic: the server answers a connection's
first request as HTTP/1.1 (keep-alive implied, no ``Connection`` header) and
meets the connection's next request by hanging up without a byte of answer —
a reset (``hang_up="reset"``: the close lands while the request is in flight)
or an end of file (``hang_up="eof"``). A request saying ``Connection: close``
is answered with it and the connection closed, as HTTP/1.1 says.

Pure Python (asyncio streams, on a thread of its own) in front of an ASGI app:
a minimal HTTP/1.1 reader (``Content-Length`` bodies only, which is all a
tool client sends) and a response written with ``Content-Length``.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import unquote

HANG_UPS = ("reset", "eof")


@dataclass
class Counts:
    """What the server saw: connections, requests answered, requests hung up on, and those asking to close."""

    connections: int = 0
    answered: int = 0
    hung_up: int = 0
    asked_to_close: int = 0


class ClosingServer:
    """``ClosingServer(app, hang_up)``; :meth:`start` serves it on a free port of 127.0.0.1 (:attr:`url`)."""

    def __init__(self, app, hang_up: str = "reset"):
        if hang_up not in HANG_UPS:
            raise ValueError(f"hang_up is one of {HANG_UPS}")
        self.app, self.hang_up = app, hang_up
        self.counts = Counts()
        #: Answers a connection gets before its next request is hung up on (0: every request is).
        self.answers_per_connection = 1
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None

    def start(self) -> None:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop)
        self._server = started.result(timeout=10)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    def stop(self) -> None:
        """Stop listening, end the connections still open (each closes its writer), then stop and close the loop."""
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._shut(self._server), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    @staticmethod
    async def _shut(server: asyncio.Server) -> None:
        server.close()
        handlers = asyncio.all_tasks() - {asyncio.current_task()}
        for handler in handlers:
            handler.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.counts.connections += 1
        try:
            await self._answer(reader, writer)
        finally:  # however the connection ended: an unclosed writer is a warning when it is collected
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        answered = 0
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                method, target, headers = _parsed(head)
                if answered >= self.answers_per_connection:  # the connection was closed: this request meets it
                    self.counts.hung_up += 1
                    return self._hang_up(writer)
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                closing = "close" in headers.get("connection", "").lower()
                self.counts.asked_to_close += closing
                status, response_headers, content = await self._call(method, target, headers, body)
                lines = [f"HTTP/1.1 {status} -", *(f"{k}: {v}" for k, v in response_headers)]
                lines.append(f"content-length: {len(content)}")
                if closing:
                    lines.append("connection: close")
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + content)
                await writer.drain()
                self.counts.answered += 1
                answered += 1
                if closing:
                    return
        except ConnectionError:
            return

    def _hang_up(self, writer: asyncio.StreamWriter) -> None:
        if self.hang_up == "reset":  # linger 0: the close is a reset, the request in flight unanswered
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        else:
            writer.close()  # an end of file at once, before the caller's own close

    async def _call(self, method: str, target: str, headers: dict[str, str], body: bytes):
        """The ASGI app's status, headers (but ``content-length``) and body for one request."""
        path, _, query = target.partition("?")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": unquote(path),
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
            "client": ("127.0.0.1", 0),
            "server": ("127.0.0.1", 0),
        }
        sent: list[dict] = []
        requests = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict:
            return requests.pop() if requests else {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            sent.append(message)

        await self.app(scope, receive, send)
        start = next(m for m in sent if m["type"] == "http.response.start")
        content = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        kept = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in start.get("headers", [])]
        return start["status"], [(k, v) for k, v in kept if k.lower() != "content-length"], content


def _parsed(head: bytes) -> tuple[str, str, dict[str, str]]:
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, target, _ = request_line.split(" ", 2)
    headers = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return method, target, headers


@contextmanager
def closing(app, hang_up: str = "reset") -> Iterator[ClosingServer]:
    """``app`` served by a :class:`ClosingServer` while the block runs."""
    server = ClosingServer(app, hang_up)
    server.start()
    try:
        yield server
    finally:
        server.stop()
