"""Inside a sandbox's namespaces: bring loopback up, start the tool, and relay a Unix socket to its port.

``python …/nlpbench/runner/relay.py SOCKET PORT STATUS CPU_SECONDS DATA_BYTES CGROUP_PROCS COMMAND``
(a script of the standard library only, so it starts at once) is what
:func:`nlpbench.runner.sandbox.start_tool` runs as the first process of a
fresh network (and PID) namespace. It sets the loopback interface up (a
new network namespace has it down and nothing else), starts ``COMMAND`` with
``/bin/sh -c`` in its own process group under ``RLIMIT_CPU`` (soft
``CPU_SECONDS``, so the kernel sends ``SIGXCPU``) and ``RLIMIT_DATA``
(``DATA_BYTES``, a backstop to the runner's watch of resident memory; none if
0), in the tool's cgroup if ``CGROUP_PROCS`` names one (``cgroup.procs``
files separated by ``:``, each written with the tool's id before it runs
anything, so all it starts is inside; the relay stays outside), and
copies bytes both ways between each connection accepted on ``SOCKET`` and
``127.0.0.1:PORT``. When the tool ends, its status goes to ``STATUS`` as JSON
(``{"returncode": N}``, negative for a signal, as :mod:`subprocess` reports it)
and the relay exits, which ends the namespace and every process left in it.
``SIGTERM`` is passed on to the tool's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import sys

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
CHUNK = 64 * 1024


def loopback_up() -> None:
    """Set ``lo`` up, as ``ip link set lo up`` does (ioctl on an ``ifreq``: name, then flags), unless it is."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
        if flags & IFF_UP:  # the host's own, with network allowed
            return
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        pass
    finally:
        writer.close()


async def relay(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter, port: int) -> None:
    """One connection: copy both ways until each side is done; a tool not (yet) listening closes it."""
    try:
        tool_reader, tool_writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, tool_writer), pipe(tool_reader, client_writer))


async def serve(socket_path: str, port: int, tool: subprocess.Popen) -> int:
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, lambda: _signal_group(tool, signal.SIGTERM))
    server = await asyncio.start_unix_server(lambda r, w: relay(r, w, port), path=socket_path)
    async with server:
        return await loop.run_in_executor(None, tool.wait)


def _signal_group(tool: subprocess.Popen, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(tool.pid, number)


def main(argv: list[str]) -> int:
    socket_path, port, status_path, cpu_seconds, data_bytes, cgroup_procs, command = argv
    loopback_up()

    def limited() -> None:
        for procs in filter(None, cgroup_procs.split(":")):
            with open(procs, "w") as joined:
                joined.write(str(os.getpid()))
        cpu = int(cpu_seconds)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if int(data_bytes):
            resource.setrlimit(resource.RLIMIT_DATA, (int(data_bytes), int(data_bytes)))

    tool = subprocess.Popen(["/bin/sh", "-c", command], preexec_fn=limited, process_group=0)
    returncode = asyncio.run(serve(socket_path, int(port), tool))
    with open(status_path + ".part", "w") as status:
        json.dump({"returncode": returncode}, status)
    os.replace(status_path + ".part", status_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
