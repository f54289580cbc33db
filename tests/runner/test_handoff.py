"""Connections handed over by a relay (:mod:`nlpbench.runner.handoff`), against a relay played by a thread: a
connection handed over at any moment around the tool's end fails at once, never at its timeout."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import httpx
import pytest

from nlpbench.runner.handoff import Handed, SyncHandoffTransport

#: Seconds anything here waits: a bound for a broken handoff, never a measure.
BOUND = 60.0


def relay(path: str, handed: Handed, shut_first: bool, peers: list[socket.socket]) -> threading.Thread:
    """A relay that takes one connection and hands over one end of a TCP connection (the other kept in ``peers``).

    With ``shut_first`` the tool ends (``handed.shut()``) after the runner asked for its connection and before the
    relay hands it over; else once the request has come on the connection handed over.
    """
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def run() -> None:
        with listener, listener.accept()[0] as control:
            tool, peer = tcp_pair()
            peers.append(peer)
            if shut_first:
                handed.shut()
            with tool:
                try:
                    socket.send_fds(control, [b"\x00"], [tool.fileno()])
                except OSError:  # the runner's side was shut first: nothing to hand over
                    return
            if not shut_first:
                peer.settimeout(BOUND)
                peer.recv(4096)  # the request: the runner now waits for the answer
                handed.shut()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def tcp_pair() -> tuple[socket.socket, socket.socket]:
    """Both ends of a TCP connection on this machine's loopback (what a relay hands over is TCP)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        connected = socket.create_connection(server.getsockname())
        return connected, server.accept()[0]


@pytest.mark.parametrize("shut_first", [True, False], ids=["handed-after-the-end", "handed-before-the-end"])
def test_a_connection_handed_over_around_the_tools_end_fails_at_once(tmp_path: Path, shut_first: bool):
    path = str(tmp_path / "s")
    handed = Handed()
    peers: list[socket.socket] = []
    thread = relay(path, handed, shut_first, peers)
    transport = SyncHandoffTransport(path, handed)
    client = httpx.Client(base_url="http://tool", transport=transport, timeout=BOUND)
    with client, pytest.raises(httpx.TransportError) as raised:
        client.get("/api/v1/healthCheck")
    thread.join(BOUND)
    assert not isinstance(raised.value, httpx.TimeoutException)
    if shut_first:  # refused, and the socket handed over after the end was closed rather than kept
        assert isinstance(raised.value, httpx.ConnectError)
        (peer,) = peers
        peer.settimeout(BOUND)
        assert peer.recv(1) == b""
    for peer in peers:
        peer.close()
