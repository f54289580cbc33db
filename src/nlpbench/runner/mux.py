"""The runner's side of the standard-stream relay: connections on a private Unix socket carried as frames.

A sandbox that passes the tool nothing but its standard streams (gVisor) runs
the relay in its ``stdio`` mode (:mod:`nlpbench.runner.relay`). :class:`Bridge`
accepts each connection a client makes on the runner's listening socket, gives
it a channel, and carries its bytes to the relay's standard input as frames
(``OPEN``, ``DATA``, ``EOF``), and the frames of the relay's standard output
back to it; the relay's last frame is the tool's status. The bridge runs its
own event loop in a thread, started with the sandbox and stopped with it.

Every connection the bridge takes is ended with it: it accepts in the same step
as it records the connection (not in a task of its own that a loop ending may
never run), and at its end it stops accepting (closing the listening socket, so
a connection still waiting there is reset and a new one refused) before it
closes every connection it took. A connection made at any moment around the
relay's end therefore fails at once rather than waiting for its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import socket
import threading
from typing import BinaryIO

from nlpbench.runner.relay import CHUNK, CLOSE, DATA, EOF, OPEN, STATUS, frame, read_frame

#: Seconds the bridge stops taking connections when it has no descriptor left for one.
ACCEPT_PAUSE_SECONDS = 1.0


class Bridge:
    """Carries the connections accepted on ``listener`` over the relay's ``stdin`` and ``stdout`` (pipes)."""

    def __init__(self, listener: socket.socket, stdin: BinaryIO, stdout: BinaryIO):
        self.returncode: int | None = None
        self._listener, self._stdin, self._stdout = listener, stdin, stdout
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, name="nlpbench-bridge", daemon=True)
        self._thread.start()
        self._ready.wait()

    def close(self) -> None:
        """Stop carrying (the relay has ended, or is being stopped) and wait for the thread."""
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing to stop
                self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        reader = asyncio.StreamReader(limit=2 * CHUNK)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), self._stdout)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, self._stdin)
        out = asyncio.StreamWriter(transport, protocol, None, loop)
        clients: dict[int, asyncio.StreamWriter] = {}
        #: The connections taken whose task has not ended (one that has is in ``clients`` or closed).
        taken: dict[socket.socket, asyncio.Task[None]] = {}
        numbers = iter(range(1, 2**32))

        async def client(connection: socket.socket) -> None:
            channel = next(numbers)
            try:
                client_reader, client_writer = await asyncio.open_connection(sock=connection, limit=2 * CHUNK)
            except BaseException:  # cancelled at the bridge's end (or no transport made): the connection ends here
                connection.close()
                raise
            clients[channel] = client_writer

            def send(kind: int, payload: bytes = b"") -> bool:
                """Write a frame unless the relay's input is closed (the sandbox ended): whether it was written."""
                if transport.is_closing():
                    client_writer.close()
                    return False
                out.write(frame(channel, kind, payload))
                return True

            try:
                if not send(OPEN):
                    return
                while chunk := await client_reader.read(CHUNK):
                    if not send(DATA, chunk):
                        return
                    await out.drain()
                send(EOF)
            except (OSError, RuntimeError):  # the relay's input broke: the sandbox ended
                client_writer.close()

        async def dispatch() -> None:
            while (got := await read_frame(reader)) is not None:
                channel, kind, payload = got
                if kind == STATUS:
                    # a malformed status: no return code known
                    with contextlib.suppress(ValueError, KeyError, TypeError):
                        returncode = json.loads(payload)["returncode"]
                        self.returncode = returncode if isinstance(returncode, int) else None
                elif (writer := clients.get(channel)) is not None:
                    if kind == DATA:
                        writer.write(payload)
                        with contextlib.suppress(OSError):  # the client went away: its data is dropped
                            await writer.drain()
                    elif kind == EOF and writer.can_write_eof():
                        writer.write_eof()
                    elif kind == CLOSE:
                        clients.pop(channel).close()
            transport.close()  # the relay ended: nothing more is written to it, and its connections end
            for writer in clients.values():
                writer.close()
            self._stop.set()

        def accept() -> None:
            """Take every connection waiting, each recorded as it is taken (see the module's docstring)."""
            while True:
                try:
                    connection, _ = self._listener.accept()
                except BlockingIOError:  # none waiting: the next wake of the listener takes the next one
                    return
                except OSError:  # out of descriptors: the connection waits, taken in a second (as asyncio's servers)
                    loop.remove_reader(self._listener.fileno())
                    loop.call_later(ACCEPT_PAUSE_SECONDS, listen)
                    return
                connection.setblocking(False)
                taken[connection] = loop.create_task(client(connection))
                taken[connection].add_done_callback(functools.partial(_served, taken, connection))

        def listen() -> None:
            if not self._stop.is_set():  # the listener is closed once the bridge stops
                loop.add_reader(self._listener.fileno(), accept)

        self._listener.setblocking(False)
        listen()
        self._ready.set()
        reading = asyncio.create_task(dispatch())
        await self._stop.wait()
        loop.remove_reader(self._listener.fileno())
        self._listener.close()  # no connection is taken any more: one waiting is reset, a new one refused
        reading.cancel()
        transport.close()
        for writer in clients.values():
            writer.transport.abort()
        left = dict(taken)
        for task in left.values():
            task.cancel()
        await asyncio.gather(reading, *left.values(), return_exceptions=True)
        await asyncio.sleep(0)  # the aborted transports close their sockets in the loop's next step
        for connection in left:  # a task cancelled before it ran never saw its connection: closed here
            connection.close()


def _served(taken: dict[socket.socket, asyncio.Task[None]], connection: socket.socket, _: asyncio.Task[None]) -> None:
    """``connection``'s task has ended: the connection is in the bridge's clients, or closed."""
    taken.pop(connection, None)
