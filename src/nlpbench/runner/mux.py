"""The runner's side of the standard-stream relay: connections on a private Unix socket carried as frames.

A sandbox that passes the tool nothing but its standard streams (gVisor) runs
the relay in its ``stdio`` mode (:mod:`nlpbench.runner.relay`). :class:`Bridge`
accepts each connection a client makes on the runner's listening socket, gives
it a channel, and carries its bytes to the relay's standard input as frames
(``OPEN``, ``DATA``, ``EOF``), and the frames of the relay's standard output
back to it; the relay's last frame is the tool's status. The bridge runs its
own event loop in a thread, started with the sandbox and stopped with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from typing import BinaryIO

from nlpbench.runner.relay import CHUNK, CLOSE, DATA, EOF, OPEN, STATUS, frame, read_frame


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
        numbers = iter(range(1, 2**32))

        async def client(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
            channel = next(numbers)
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

        server = await asyncio.start_unix_server(client, sock=self._listener)
        self._ready.set()
        reading = asyncio.create_task(dispatch())
        async with server:
            await self._stop.wait()
        reading.cancel()
        transport.close()
