"""The runner's side of gVisor's framed relay (:class:`nlpbench.runner.mux.Bridge`), against pipes standing in
for the relay: a connection made at any moment around the relay's end is ended, never left to its timeout."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from nlpbench.runner.mux import Bridge

#: Seconds a client waits for the bridge to end its connection: a bound for a broken bridge, never a measure.
BOUND = 60.0


def ended(connection: socket.socket) -> bool:
    """Whether the bridge ended ``connection``: an end of stream or a reset, rather than waiting."""
    connection.settimeout(BOUND)
    try:
        return connection.recv(1) == b""
    except ConnectionResetError:  # closed with the request unread: ended too
        return True
    except TimeoutError:  # left waiting: the defect
        return False


@pytest.mark.parametrize("waiting", [1, 50])
def test_connections_waiting_as_the_relay_ends_are_ended(tmp_path: Path, waiting: int):
    """The relay's end and the connections come together at the bridge's first look: each one is ended."""
    path = str(tmp_path / "s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    to_relay, relay_input = os.pipe()
    relay_output, from_relay = os.pipe()
    clients = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(waiting)]
    for client in clients:
        client.connect(path)
        client.sendall(b"GET /api/v1/healthCheck HTTP/1.1\r\nhost: tool\r\n\r\n")
    os.close(from_relay)  # the relay has ended before the bridge looks
    with open(relay_input, "wb") as stdin, open(relay_output, "rb") as stdout:
        bridge = Bridge(listener, stdin, stdout)
        try:
            assert all(ended(client) for client in clients)
        finally:
            bridge.close()
            os.close(to_relay)
            for client in clients:
                client.close()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as late, pytest.raises(ConnectionRefusedError):
        late.connect(path)
