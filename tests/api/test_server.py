""":mod:`nlpbench.api.server`: every connection without Nagle's delay, on a socket bound by ``listen``."""

from __future__ import annotations

import socket
import threading
import time

import httpx

from nlpbench.api.server import TimedConfig, TimedHttpToolsProtocol, run
from nlpbench.cli.serve import listen


async def _ok(scope, receive, send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def test_connections_have_no_nagle_delay_and_the_timeouts_given(monkeypatch):
    """A socket from ``socket.create_server`` has protocol number 0, so asyncio leaves Nagle's algorithm on
    for its connections: an answer on a kept-alive one then waits ~40 ms for the client's delayed ACK."""
    seen: list[tuple[int, float, float]] = []
    made = TimedHttpToolsProtocol.connection_made

    def watched(protocol, transport):
        made(protocol, transport)
        option = transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        seen.append((option, protocol.header_timeout, protocol.body_timeout))

    monkeypatch.setattr(TimedHttpToolsProtocol, "connection_made", watched)
    sock = listen("127.0.0.1", 0)
    assert sock.proto == 0  # what makes asyncio skip TCP_NODELAY
    options = {"log_level": "warning", "lifespan": "off", "header_timeout": 3.0, "body_timeout": 7.0}
    threading.Thread(target=run, args=(_ok, sock), kwargs=options, daemon=True).start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    deadline = time.monotonic() + 30
    with httpx.Client(timeout=30) as client:
        while True:
            try:
                assert client.get(url).text == "ok"
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert client.get(url).text == "ok"
    assert seen and all(found == (1, 3.0, 7.0) for found in seen)
    assert TimedConfig(_ok).timeout_keep_alive == 5
