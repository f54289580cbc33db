"""Inside a sandbox: start the tool, and give the runner connections to its port.

``python -I -S relay.py LISTEN_FD STATUS_FD PORT COMMAND`` (a script of the
standard library only, so it starts at once) is the first program of the tool's
sandbox (:mod:`nlpbench.runner.sandbox`). ``LISTEN_FD`` is a listening Unix
socket the runner made and handed over as a descriptor: the tool's sandbox
holds no path to it, and nothing but the runner connects to it. The relay sets
loopback up where it is down (a new network namespace of ``unshare`` has it so;
bubblewrap sets it up itself), starts ``COMMAND`` with ``/bin/sh -c`` in its own
process group, and for each connection accepted on ``LISTEN_FD`` opens one to
``127.0.0.1:PORT`` and hands it to the runner (:func:`hand_over`), which then
speaks to the tool directly: no bytes pass through the relay. When the tool ends, its status goes to
``STATUS_FD`` as one line of JSON (``{"returncode": N}``, negative for a
signal, as :mod:`subprocess` reports it) and the relay exits, which ends the
sandbox and every process left in it. ``SIGTERM`` is passed on to the tool's
process group.

With ``COMMAND`` ``-`` the relay starts no tool: it hands connections over until it is
ended (a container's entry point is the tool, and the relay joins the
container's network namespace from outside: :mod:`nlpbench.runner.podman`).

A sandbox that passes no descriptor but the standard streams (gVisor) runs
``relay.py stdio - PORT COMMAND``: the runner's connections then come as
frames on standard input and go back as frames on standard output
(:func:`frame`: channel, kind, length, bytes; :mod:`nlpbench.runner.mux` is
the runner's side), the tool's output goes to standard error, and the status
is the last frame. Nothing but the runner writes to the relay's input.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import signal
import socket
import struct
import subprocess
import sys

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
CHUNK = 64 * 1024
#: A frame's header: its channel, its kind, the length of its bytes.
HEADER = struct.Struct(">IBI")
#: Kinds of frames: a new connection (runner to relay), bytes, the end of one side, the end of both, the status.
OPEN, DATA, EOF, CLOSE, STATUS = 1, 2, 3, 4, 5


def frame(channel: int, kind: int, payload: bytes = b"") -> bytes:
    """One frame of the standard-stream protocol."""
    return HEADER.pack(channel, kind, len(payload)) + payload


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, int, bytes] | None:
    """The next frame, or None at the end of the stream."""
    try:
        channel, kind, length = HEADER.unpack(await reader.readexactly(HEADER.size))
        return channel, kind, await reader.readexactly(length)
    except asyncio.IncompleteReadError:  # the stream ended
        return None


def loopback_up() -> None:
    """Set ``lo`` up, as ``ip link set lo up`` does (ioctl on an ``ifreq``: name, then flags), unless it is."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
        if flags & IFF_UP:
            return
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


async def hand_over(listener: socket.socket, port: int) -> None:
    """For each connection the runner makes, a TCP connection to the tool's port, handed to the runner
    (``SCM_RIGHTS``, with one byte) and closed here: the runner then speaks to the tool directly
    (:mod:`nlpbench.runner.handoff`). A tool not (yet) listening: the runner's connection closes, empty."""
    loop = asyncio.get_running_loop()
    listener.setblocking(False)
    while True:
        control, _ = await loop.sock_accept(listener)
        with control:
            tool = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            tool.setblocking(False)
            with tool:
                try:
                    await loop.sock_connect(tool, ("127.0.0.1", port))
                except OSError:  # the tool does not listen yet: try again
                    continue
                control.setblocking(True)
                with contextlib.suppress(OSError):  # the runner gave up meanwhile
                    socket.send_fds(control, [b"\x00"], [tool.fileno()])


async def serve(listener: socket.socket, port: int, tool: subprocess.Popen) -> int:
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, lambda: _signal_group(tool, signal.SIGTERM))
    handing = asyncio.create_task(hand_over(listener, port))
    while tool.poll() is None:  # polled, not waited for in a thread: nothing left behind at the end
        await asyncio.sleep(0.05)
    handing.cancel()
    return tool.returncode


async def forward(listener: socket.socket, port: int) -> None:
    """Forward every connection until ``SIGTERM``."""
    stopped = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
    handing = asyncio.create_task(hand_over(listener, port))
    await stopped.wait()
    handing.cancel()


def _signal_group(tool: subprocess.Popen, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # the group ended meanwhile
        os.killpg(tool.pid, number)


async def serve_frames(port: int, tool: subprocess.Popen) -> int:
    """The standard-stream protocol: each channel the runner opens is a connection to the tool's port."""
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, lambda: _signal_group(tool, signal.SIGTERM))
    reader = asyncio.StreamReader(limit=2 * CHUNK)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    out = asyncio.StreamWriter(transport, protocol, None, loop)
    inboxes: dict[int, asyncio.Queue] = {}

    async def connection(channel: int, inbox: asyncio.Queue) -> None:
        try:
            tool_reader, tool_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            out.write(frame(channel, CLOSE))
            return

        async def to_tool() -> None:
            while (payload := await inbox.get()) is not None:
                tool_writer.write(payload)
                await tool_writer.drain()
            if tool_writer.can_write_eof():
                tool_writer.write_eof()

        async def from_tool() -> None:
            while chunk := await tool_reader.read(CHUNK):
                out.write(frame(channel, DATA, chunk))
                await out.drain()
            out.write(frame(channel, EOF))

        try:
            await asyncio.gather(to_tool(), from_tool())
        except OSError:  # a side closed: the relay of this connection ends
            pass
        finally:
            tool_writer.close()
            out.write(frame(channel, CLOSE))
            inboxes.pop(channel, None)

    async def dispatch() -> None:
        tasks = set()
        while (got := await read_frame(reader)) is not None:
            channel, kind, payload = got
            if kind == OPEN:
                inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
                inboxes[channel] = inbox
                task = asyncio.create_task(connection(channel, inbox))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            elif channel in inboxes and kind in (DATA, EOF):
                inboxes[channel].put_nowait(payload if kind == DATA else None)
            elif channel in inboxes and kind == CLOSE:
                inboxes.pop(channel).put_nowait(None)

    reading = asyncio.create_task(dispatch())
    while tool.poll() is None:
        await asyncio.sleep(0.05)
    reading.cancel()
    out.write(frame(0, STATUS, json.dumps({"returncode": tool.returncode}).encode()))
    await out.drain()
    return tool.returncode


def main(argv: list[str]) -> int:
    listen_fd, status_fd, port, command = argv
    with contextlib.suppress(OSError):  # no CAP_NET_ADMIN: then it is up already (bubblewrap, gVisor)
        loopback_up()
    if listen_fd == "stdio":  # the tool must not write into the frames: its output goes to standard error
        tool = subprocess.Popen(["/bin/sh", "-c", command], process_group=0, stdin=subprocess.DEVNULL, stdout=2)
        asyncio.run(serve_frames(int(port), tool))
        return 0
    listener = socket.socket(fileno=int(listen_fd))
    if command == "-":  # no tool of ours to start: forward until ended
        asyncio.run(forward(listener, int(port)))
        return 0
    tool = subprocess.Popen(["/bin/sh", "-c", command], process_group=0, pass_fds=())
    returncode = asyncio.run(serve(listener, int(port), tool))
    with open(int(status_fd), "w") as status:
        status.write(json.dumps({"returncode": returncode}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
