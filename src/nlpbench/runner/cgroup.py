"""A cgroup of its own for each sandboxed tool, where this machine lets us make one.

:func:`make_cgroup` tries, in this order, and returns None (with one log line
saying why, once per reason) when neither works:

- cgroup v2: below the runner's own cgroup (``0::PATH`` in
  ``/proc/self/cgroup``, under the ``cgroup2`` mount), where ``memory`` and
  ``pids`` are in ``cgroup.subtree_control`` or can be put there; the tool
  gets ``nlpbench/tool-<random>`` with ``memory.max`` = ``memory_bytes``,
  ``memory.swap.max`` = 0 (swap counts against the limit: it gets none),
  ``pids.max`` = ``tasks``. The kernel enables controllers for the children of
  a cgroup that holds processes only at the hierarchy's root, so in practice
  this works where the runner runs in that root; elsewhere it refuses
  (``EBUSY``) and v1 is tried. (Untested on pure v2: the machines this was
  written on have v1.)
- cgroup v1: the ``memory`` and ``pids`` hierarchies (and ``cpuacct`` if
  mounted), each below the runner's own cgroup there, with
  ``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes`` (memory plus
  swap, where swap is accounted) = ``memory_bytes``, ``pids.max`` = ``tasks``.

The kernel enforces both: past ``memory_bytes`` its OOM killer ends a process
of the cgroup (counted as ``oom_kill`` in ``memory.events`` or
``memory.oom_control``), and a fork or thread past ``tasks`` fails with
``EAGAIN`` (counted as ``max`` in ``pids.events``). A process joins by writing
its own id to each :attr:`Cgroup.procs_files` before it runs anything else, so
all it starts is inside. :meth:`Cgroup.remove` kills every process in it
(``cgroup.kill`` on v2 where it exists, else ``SIGKILL`` to each id in
``cgroup.procs`` until none is left) and removes its directories, retrying
briefly while the kernel still counts the dead.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import secrets
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

log = logging.getLogger(__name__)

#: The directory, below the runner's own cgroup, that holds one cgroup per running tool.
PARENT = "nlpbench"
#: The controllers a cgroup must have; ``cpuacct`` (v1) only adds exact CPU accounting.
NEEDED = ("memory", "pids")
#: How long :meth:`Cgroup.remove` keeps trying to empty and remove a cgroup.
REMOVE_SECONDS = 5.0


@dataclass(frozen=True)
class Cgroup:
    """One tool's cgroup: its directory per controller (v2: one directory for all)."""

    version: int
    directories: dict[str, Path]  # controller ("memory", "pids", "cpuacct") -> directory

    @property
    def procs_files(self) -> tuple[str, ...]:
        """The ``cgroup.procs`` files a process writes its id to, to join (one per distinct directory)."""
        return tuple(str(directory / "cgroup.procs") for directory in dict.fromkeys(self.directories.values()))

    def pids(self) -> set[int]:
        """The ids (on this host) of every process in the cgroup."""
        found: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError):  # the cgroup is gone: no processes
                found.update(int(line) for line in Path(procs).read_text().split())
        return found

    def oom_kills(self) -> int:
        """How many processes the kernel's OOM killer ended in the cgroup (its memory limit reached)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        return _counter(self.directories["memory"] / name, "oom_kill", 0)

    def pids_refused(self) -> int:
        """How many forks or new threads the kernel refused at ``pids.max``."""
        return _counter(self.directories["pids"] / "pids.events", "max", 0)

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process ever in the cgroup (those that exited too), if accounted."""
        if self.version == 2:
            usec = _counter(self.directories["memory"] / "cpu.stat", "usage_usec", None)
            return None if usec is None else usec / 1e6
        if "cpuacct" not in self.directories:
            return None
        with contextlib.suppress(OSError, ValueError):  # the kernel does not say: None
            return int((self.directories["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        return None

    def current_memory_bytes(self) -> int:
        """The memory the cgroup holds now, as the kernel counts it (a page shared by processes once)."""
        name = "memory.current" if self.version == 2 else "memory.usage_in_bytes"
        with contextlib.suppress(OSError, ValueError):  # the kernel does not say: 0
            return int((self.directories["memory"] / name).read_text())
        return 0

    def peak_memory_bytes(self) -> int:
        """The most memory the cgroup has held (0 where the kernel does not say)."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        with contextlib.suppress(OSError, ValueError):  # the kernel does not say: 0
            return int((self.directories["memory"] / name).read_text())
        return 0

    def kill(self) -> None:
        """``SIGKILL`` every process in the cgroup (``cgroup.kill`` where the kernel has it)."""
        if self.version == 2:
            with contextlib.suppress(OSError):  # an older kernel: each process is killed below
                (self.directories["memory"] / "cgroup.kill").write_text("1")
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):  # ended meanwhile
                os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Kill what is left and remove the cgroup's directories (and the shared parent once it is empty)."""
        deadline = time.monotonic() + REMOVE_SECONDS
        for directory in dict.fromkeys(self.directories.values()):
            while directory.exists():
                self.kill()
                try:
                    directory.rmdir()
                except FileNotFoundError:  # removed meanwhile: done
                    break
                except OSError as error:
                    if error.errno != errno.EBUSY or time.monotonic() > deadline:
                        log.warning("cannot remove the tool's cgroup %s: %s", directory, error.strerror)
                        break
                    time.sleep(0.02)
            with contextlib.suppress(OSError):  # busy while another tool runs: that one removes it
                directory.parent.rmdir()


def make_cgroup(memory_bytes: int, tasks: int, owner: str) -> Cgroup | None:
    """A new cgroup limited to ``memory_bytes`` (swap included) and ``tasks`` processes and threads, or None.

    Its name, ``tool-OWNER-RANDOM``, says which runner made it (``OWNER``
    tells a live process from a dead one: see :func:`reap_cgroups`).
    """
    places = _places()
    if isinstance(places, str):
        _fall_back(places)
        return None
    version, parents = places
    name = f"tool-{owner}-{secrets.token_hex(6)}"
    made: dict[str, Path] = {}
    cgroup = Cgroup(version, made)
    try:
        for controller, parent in parents.items():
            made[controller] = _mkdir(parent / PARENT, name, version)
        memory = made["memory"]
        if version == 2:
            (memory / "memory.max").write_text(str(memory_bytes))
            if (memory / "memory.swap.max").exists():
                (memory / "memory.swap.max").write_text("0")
        else:
            (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():
                (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
        (made["pids"] / "pids.max").write_text(str(tasks))
    except OSError as error:
        cgroup.remove()
        _fall_back(f"cannot make a cgroup in {parents['memory']}: {error.strerror}")
        return None
    return cgroup


def reap_cgroups(alive: Callable[[str], bool]) -> None:
    """Remove the cgroups of tools whose runner is dead (``alive(OWNER)`` false), killing anything left in them."""
    places = _places()
    if isinstance(places, str):
        return
    version, parents = places
    for parent in dict.fromkeys(parents.values()):
        for directory in (parent / PARENT).glob("tool-*"):
            owner = directory.name.removeprefix("tool-").rpartition("-")[0]
            if directory.is_dir() and not alive(owner):
                Cgroup(version, {"memory": directory, "pids": directory}).remove()


def _mkdir(parent: Path, name: str, version: int) -> Path:
    """``parent/name``, making ``parent`` (v2: with memory and pids for its children) if another tool removed it."""
    for _ in range(3):
        try:
            parent.mkdir(exist_ok=True)
            if version == 2:
                _enable(parent)
            (parent / name).mkdir()
            return parent / name
        except FileNotFoundError:  # the shared parent removed between the two mkdirs: again
            continue
    raise OSError(errno.ENOENT, "the cgroup's parent keeps disappearing")


def _enable(directory: Path) -> None:
    """Make sure ``memory`` and ``pids`` are in ``directory``'s ``cgroup.subtree_control``."""
    control = directory / "cgroup.subtree_control"
    if not set(NEEDED) <= set(control.read_text().split()):
        control.write_text(" ".join(f"+{controller}" for controller in NEEDED))


@functools.cache
def _places() -> tuple[int, dict[str, Path]] | str:
    """Where this process may make cgroups: (version, controller -> the runner's own cgroup), or why not."""
    own = _own_cgroups()
    mounts = _mounts()
    if "" in own and "cgroup2" in mounts:
        base = mounts["cgroup2"] / own[""].lstrip("/")
        try:
            available = set((base / "cgroup.controllers").read_text().split())
            if set(NEEDED) <= available:
                _enable(base)
                return 2, dict.fromkeys(NEEDED, base)
        except OSError:  # no usable v2 hierarchy here: v1 is tried next
            pass
    parents = {
        controller: mounts[controller] / own[controller].lstrip("/")
        for controller in (*NEEDED, "cpuacct")
        if controller in mounts and controller in own
    }
    missing = [controller for controller in NEEDED if controller not in parents]
    if missing:
        return f"no cgroup here with {' and '.join(missing)} (cgroup v2 or v1)"
    if not all(os.access(parent, os.W_OK) for parent in parents.values()):
        return "the cgroup hierarchies are not writable"
    return 1, parents


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per v1 controller, and ``""`` for v2 (``/proc/self/cgroup``)."""
    own: dict[str, str] = {}
    with contextlib.suppress(OSError):  # no /proc: no cgroups known
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                own[controller] = path
    return own


def _mounts() -> dict[str, Path]:
    """Where each v1 controller's hierarchy is mounted, and ``cgroup2`` for the v2 one (at its root only)."""
    mounts: dict[str, Path] = {}
    with contextlib.suppress(OSError):  # no /proc: no mounts known
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields, _, tail = line.partition(" - ")
            root, mountpoint = fields.split()[3:5]
            fstype, _, options = tail.split()[:3]
            if root != "/":  # a bind of part of a hierarchy: our own path is not below it
                continue
            if fstype == "cgroup2":
                mounts.setdefault("cgroup2", Path(mountpoint))
            elif fstype == "cgroup":
                for option in options.split(","):
                    mounts.setdefault(option, Path(mountpoint))
    return mounts


@functools.cache
def _fall_back(why: str) -> None:
    log.info("sandboxed tools run without a cgroup (rlimits and the runner's watch only): %s", why)


_Default = TypeVar("_Default", int, None)


def _counter(path: Path, key: str, default: _Default) -> int | _Default:
    """The number after ``key`` in a ``key value`` file such as ``memory.events``."""
    with contextlib.suppress(OSError, ValueError):  # no such file or value: the default
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return default
