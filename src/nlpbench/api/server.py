"""How nlpbench's services run under uvicorn: a client gets bounded time to send its request.

uvicorn (0.54) closes a connection left idle between requests after
``timeout_keep_alive`` seconds, but that clock starts only when a response
has been sent and stops at the next byte received. A client that opens a
connection and never sends a request, or sends its headers (or its body) a
byte every few seconds — slowloris — holds the connection, and a slot of the
server, for as long as it likes. Neither uvicorn nor httptools (nor h11) has
a timeout for reading a request. :class:`TimedHttpToolsProtocol` is
uvicorn's own httptools protocol with one: a request's headers must arrive
within ``header_timeout`` seconds of the connection's opening (or of the
request's first byte, on a kept-alive connection), and its body within
``body_timeout`` seconds of the headers' end; otherwise the connection is
closed. :func:`run` serves an app on a bound socket with it, in one process or
several.

The protocol also turns Nagle's algorithm off on every connection. asyncio
does so only for sockets whose protocol number says TCP, and a socket bound
with :func:`socket.create_server` (as ``nlpbench.cli.serve.listen`` binds,
to fail in one line on a busy port) says 0: each answer on a kept-alive
connection then waited for the client's delayed acknowledgement, about 40 ms.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from nlpbench.api.limits import BODY_TIMEOUT, HEADER_TIMEOUT, KEEP_ALIVE_TIMEOUT


class TimedConfig(uvicorn.Config):
    """uvicorn's settings, with the time a client has for a request's headers and for its body."""

    def __init__(
        self, app: Any, *, header_timeout: float = HEADER_TIMEOUT, body_timeout: float = BODY_TIMEOUT, **options: Any
    ):
        options.setdefault("timeout_keep_alive", KEEP_ALIVE_TIMEOUT)
        super().__init__(app, http=TimedHttpToolsProtocol, **options)
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout


class TimedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing a connection whose request does not arrive in time.

    One timer per connection: armed for the headers when the connection opens and when a request begins
    on a kept-alive one, re-armed for the body when the headers are in, stopped when the request is.
    """

    def __init__(self, config: TimedConfig, *args: Any, **kwargs: Any):
        super().__init__(config, *args, **kwargs)
        self.header_timeout = getattr(config, "header_timeout", HEADER_TIMEOUT)
        self.body_timeout = getattr(config, "body_timeout", BODY_TIMEOUT)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        connection = transport.get_extra_info("socket")
        if connection is not None and connection.family in (socket.AF_INET, socket.AF_INET6):
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._arm(self.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a new request on a kept-alive connection; the first one's clock runs
            self._arm(self.header_timeout)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._arm(self.body_timeout)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def run(app: Any, sock: socket.socket, *, workers: int = 1, **options: Any) -> None:
    """Serve ``app`` (an app, or with ``factory=True`` an import string of a factory) on the bound ``sock``
    under :class:`TimedConfig`; with ``workers`` over 1, in that many processes sharing the socket (as
    ``uvicorn.run`` does, on a socket bound before anything was printed)."""
    config = TimedConfig(app, workers=workers, **options)
    if workers > 1:
        from uvicorn.supervisors import Multiprocess

        Multiprocess(config, sockets=[sock]).run()
    else:
        uvicorn.Server(config).run(sockets=[sock])
