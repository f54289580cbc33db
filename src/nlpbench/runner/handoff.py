"""Connections to a sandboxed tool, made inside its network namespace and handed to the runner: no relay between.

The relay (:mod:`nlpbench.runner.relay`) listens on a Unix socket only the
runner holds; for each connection the runner makes there, it opens a TCP
connection to the tool's port inside the sandbox's network namespace and
hands that socket over (``SCM_RIGHTS``), then closes its own copy. The runner
then speaks HTTP straight to the tool, as to any tool on TCP: no process
copies the bytes of a request or an answer, and the tool's socket reaches
nothing but the tool (it belongs to the sandbox's loopback).

:class:`HandoffTransport` (asyncio) and :class:`SyncHandoffTransport` are
httpx transports whose connections are made so; a connection the relay
cannot make (the tool not listening yet, the sandbox gone) is an
``httpx.ConnectError`` like any refused connection. The sockets handed over
are kept in a :class:`Handed`, which the sandbox shuts when the tool ends:
a connection whose peer went with the sandbox's network namespace may never
hear of its end, and a request waiting on it would wait for its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import threading
import typing
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import httpcore
import httpx

#: A transport's connection pool by default: httpx's own.
POOL = httpx.Limits()


@contextmanager
def mapped(mapping: dict[type[Exception], type[Exception]]) -> Iterator[None]:
    """Raise an error of ``mapping`` as the httpcore error it maps to (httpx then makes its own of it)."""
    try:
        yield
    except Exception as error:
        for kind, replacement in mapping.items():
            if isinstance(error, kind):
                raise replacement(str(error) or type(error).__name__) from error
        raise


class Handed:
    """The sockets of a sandbox's connections still open; :meth:`shut` ends them all, once the tool ended.

    It holds both the connections the relay handed over and the requests for one still waiting on the
    relay's answer. Shutting a socket (not closing it: its owner closes it) wakes whatever waits on it with
    an end of stream, so a request in flight, or a connection asked of a relay that has ended, fails at
    once instead of waiting for its timeout. A socket added after :meth:`shut` is refused.
    """

    def __init__(self) -> None:
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._shut = False

    def add(self, sock: socket.socket) -> socket.socket:
        """Keep a connected ``sock`` to shut with the others; ``ConnectionRefusedError`` once the tool ended."""
        with self._lock:
            if not self._shut:
                self._sockets.add(sock)
                return sock
        raise ConnectionRefusedError("the tool has ended")

    def shut(self) -> None:
        """End every connection: the tool has ended."""
        with self._lock:
            self._shut = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed by its owner meanwhile, or never connected: nothing to end
        sock.shutdown(socket.SHUT_RDWR)


def _take(control: socket.socket, handed_over: Handed) -> socket.socket:
    """The socket handed over on ``control`` (one message, one descriptor), or ``OSError`` when none came."""
    _, descriptors, _, _ = socket.recv_fds(control, 1, 1)
    if not descriptors:
        raise ConnectionRefusedError("the tool is not listening")
    handed = socket.socket(fileno=descriptors[0])
    handed.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        return handed_over.add(handed)
    except ConnectionRefusedError:
        handed.close()
        raise


class _AsyncStream(httpcore.AsyncNetworkStream):
    """A handed-over socket, read and written on the running asyncio loop."""

    def __init__(self, sock: socket.socket):
        sock.setblocking(False)
        self._sock = sock

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with mapped({TimeoutError: httpcore.ReadTimeout, OSError: httpcore.ReadError}):
            return await asyncio.wait_for(asyncio.get_running_loop().sock_recv(self._sock, max_bytes), timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        with mapped({TimeoutError: httpcore.WriteTimeout, OSError: httpcore.WriteError}):
            await asyncio.wait_for(asyncio.get_running_loop().sock_sendall(self._sock, buffer), timeout)

    async def aclose(self) -> None:
        self._sock.close()

    def get_extra_info(self, info: str) -> typing.Any:
        return _extra(self._sock, info)


class _SyncStream(httpcore.NetworkStream):
    """A handed-over socket, read and written blocking, with timeouts."""

    def __init__(self, sock: socket.socket):
        self._sock = sock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with mapped({TimeoutError: httpcore.ReadTimeout, OSError: httpcore.ReadError}):
            self._sock.settimeout(timeout)
            return self._sock.recv(max_bytes)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with mapped({TimeoutError: httpcore.WriteTimeout, OSError: httpcore.WriteError}):
            self._sock.settimeout(timeout)
            self._sock.sendall(buffer)

    def close(self) -> None:
        self._sock.close()

    def get_extra_info(self, info: str) -> typing.Any:
        return _extra(self._sock, info)


def _extra(sock: socket.socket, info: str) -> typing.Any:
    """What httpcore asks of a stream: whether it is readable (a kept-alive connection the tool closed is)."""
    if info == "is_readable":
        return bool(select.select([sock], [], [], 0)[0])
    return sock if info == "socket" else None


class _AsyncBackend(httpcore.AsyncNetworkBackend):
    """Every TCP connection, whatever the host and port asked for, is one the relay hands over."""

    def __init__(self, control_path: str, handed: Handed):
        self._path = control_path
        self._handed = handed

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        loop = asyncio.get_running_loop()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as control:
            control.setblocking(False)
            mapping = {TimeoutError: httpcore.ConnectTimeout, OSError: httpcore.ConnectError}
            with mapped(mapping):
                await asyncio.wait_for(loop.sock_connect(control, self._path), timeout)
                self._handed.add(control)  # a relay that ended answers never: the sandbox's end wakes this
                await asyncio.wait_for(_readable(loop, control), timeout)
                return _AsyncStream(_take(control, self._handed))

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore.ConnectError("a sandboxed tool is reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _readable(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(sock.fileno(), wake)
    try:
        await ready
    finally:
        loop.remove_reader(sock.fileno())


class _SyncBackend(httpcore.NetworkBackend):
    def __init__(self, control_path: str, handed: Handed):
        self._path = control_path
        self._handed = handed

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as control:
            mapping = {TimeoutError: httpcore.ConnectTimeout, OSError: httpcore.ConnectError}
            with mapped(mapping):
                control.settimeout(timeout)
                control.connect(self._path)
                self._handed.add(control)  # a relay that ended answers never: the sandbox's end wakes this
                return _SyncStream(_take(control, self._handed))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore.ConnectError("a sandboxed tool is reached over TCP only")

    def sleep(self, seconds: float) -> None:
        import time

        time.sleep(seconds)


def _pool(limits: httpx.Limits) -> dict[str, typing.Any]:
    """httpcore's pool options for httpx's ``limits``, as httpx passes them."""
    return {
        "max_connections": limits.max_connections,
        "max_keepalive_connections": limits.max_keepalive_connections,
        "keepalive_expiry": limits.keepalive_expiry,
    }


class HandoffTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport, its connections made by the relay listening at ``control_path``.

    httpx takes no network backend, so the connection pool it made is replaced by one made the same way with
    ours (``_pool``: httpx's attribute since 0.18).
    """

    def __init__(self, control_path: str, handed: Handed, limits: httpx.Limits = POOL):
        super().__init__(limits=limits)
        backend = _AsyncBackend(control_path, handed)
        self._pool = httpcore.AsyncConnectionPool(network_backend=backend, **_pool(limits))


class SyncHandoffTransport(httpx.HTTPTransport):
    """The same for a synchronous ``httpx.Client``."""

    def __init__(self, control_path: str, handed: Handed, limits: httpx.Limits = POOL):
        super().__init__(limits=limits)
        self._pool = httpcore.ConnectionPool(network_backend=_SyncBackend(control_path, handed), **_pool(limits))
