"""The wire every request to a tool goes over: kept-alive connections a tool closed under a request are redialled.

HTTP/1.1 lets a server close an idle kept-alive connection at any time, and a
client whose next request meets that close before any answer may send it
again on a new connection (RFC 9112 §9.3.1; browsers and the NLP Sandbox
controller do). The NLP Sandbox's example tools run behind uWSGI's HTTP
router, which closes every connection after its answer without saying
``Connection: close`` (unbit/uwsgi#2133): a client that reuses the
connection sends its next request into a socket being torn down and reads a
reset (``ReadError``) or an end of file (``RemoteProtocolError``).

:class:`RedialTransport` wraps any httpx transport (a TCP pool, a Unix socket,
the sandbox's relay, the platform's guard) and:

- resends at once, on a new connection, a request that failed on the wire
  (a read, write or protocol error) before the head of an answer arrived, on
  a connection an earlier request had used: the request never reached the
  tool's code, or its answer never left it, and every request of the tool API
  is safe to repeat (a ``GET``, or a ``POST`` that annotates a note and
  changes nothing). The caller never sees it, so it spends none of the
  caller's retries; it is counted in :attr:`RedialTransport.redialled`;
- from the first such close on, sends every request of the tool with
  ``Connection: close``, so that each has a connection of its own and the
  tool's habit costs no more failed requests.

A request on a new connection that fails is not resent here: that failure is
the caller's to retry or report. Whether a connection was new is read from
httpcore's ``trace`` events (a ``connection.connect_*`` event precedes the
request's own); a transport that emits none (an ASGI app in process) has no
connections to go stale, and its failures pass through.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

#: The errors of a connection the server closed under a request (a reset, a broken pipe, an end of file).
CLOSED_UNDER_REQUEST = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)
#: httpcore's trace events that open a connection (the ``.started`` of each).
CONNECTING = ("connection.connect_tcp.started", "connection.connect_unix_socket.started")
#: httpcore's trace event once the head of an answer is complete.
ANSWERED = "http11.receive_response_headers.complete"
#: httpcore's trace event as a request starts on a connection.
SENDING = "http11.send_request_headers.started"

Trace = Callable[[str, dict[str, Any]], Awaitable[None]]


class _Seen:
    """A ``trace`` extension that notes whether the request opened a connection and got the head of an answer,
    passing every event on to the request's own ``trace``, if it had one."""

    def __init__(self, passed_on: Trace | None):
        self.passed_on = passed_on
        self.connected = self.sent = self.answered = False

    async def __call__(self, event: str, info: dict[str, Any]) -> None:
        self.connected |= event in CONNECTING
        self.sent |= event == SENDING
        self.answered |= event == ANSWERED
        if self.passed_on is not None:
            await self.passed_on(event, info)

    @property
    def on_reused_connection(self) -> bool:
        """Whether the request went out on a connection an earlier request had opened, and no answer came."""
        return self.sent and not self.connected and not self.answered


class RedialTransport(httpx.AsyncBaseTransport):
    """``RedialTransport(inner)``: ``inner``'s requests, resent on a new connection when a kept-alive one was
    closed under them, and every request with ``Connection: close`` from the first such close on.

    A stale connection is used up by the failure, and once :attr:`fresh_connections` is set no connection goes
    back to the pool, so resends end when the idle connections the pool held run out; ``max_redials`` bounds
    them all the same.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport, max_redials: int = 64):
        self._inner = inner
        self.max_redials = max_redials
        #: Set once the tool closed a kept-alive connection under a request: no connection is reused after.
        self.fresh_connections = False
        #: Requests resent on a new connection.
        self.redialled = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        own_trace = request.extensions.get("trace")
        for redials in range(self.max_redials + 1):
            if self.fresh_connections:
                request.headers["Connection"] = "close"
            seen = _Seen(own_trace)
            request.extensions = {**request.extensions, "trace": seen}
            try:
                return await self._inner.handle_async_request(request)
            except CLOSED_UNDER_REQUEST:
                if not seen.on_reused_connection or redials == self.max_redials:
                    raise
            self.fresh_connections = True
            self.redialled += 1
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self._inner.aclose()
