"""The sandbox's first step, on the host: join the tool's cgroup, set its limits and its death, then become the sandbox.

``python -I -S …/nlpbench/runner/launch.py PROCS CPU_SECONDS DATA_BYTES -- SANDBOX…``
(a script of the standard library only, so it starts at once) is what
:class:`nlpbench.runner.sandbox.SandboxedTool` runs: it writes its own process
id to each ``cgroup.procs`` file in ``PROCS`` (``:``-separated; empty: no
cgroup) so that the sandbox and everything it starts are inside the tool's
cgroup from the first instruction; sets ``RLIMIT_CPU`` (soft ``CPU_SECONDS``:
the kernel sends ``SIGXCPU``), ``RLIMIT_CORE`` 0 (no core files of a tool's
memory, which holds notes) and, when ``DATA_BYTES`` is not 0, ``RLIMIT_DATA``;
asks the kernel to send it ``SIGKILL`` when the runner dies (so a killed
runner leaves no sandbox behind: bubblewrap's ``--die-with-parent`` and
unshare's ``--kill-child`` carry it inward); then executes ``SANDBOX…``
(bwrap, runsc or unshare) in its own place.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> int:
    procs, cpu_seconds, data_bytes, separator, *command = argv
    if separator != "--" or not command:
        sys.stderr.write("usage: launch.py PROCS CPU_SECONDS DATA_BYTES -- COMMAND…\n")
        return 2
    parent = os.getppid()
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        sys.stderr.write("launch.py: prctl(PR_SET_PDEATHSIG) failed\n")
        return 2
    if os.getppid() != parent:  # the runner died before the death signal was set
        return 2
    for path in filter(None, procs.split(":")):
        with open(path, "w") as joined:
            joined.write(str(os.getpid()))
    cpu = int(cpu_seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if int(data_bytes):
        resource.setrlimit(resource.RLIMIT_DATA, (int(data_bytes), int(data_bytes)))
    os.execvp(command[0], command)
    return 2  # not reached: execvp replaces this process or raises


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
