"""Start a tool from a shell command in a sandbox and reach it over a Unix socket only the runner holds.

``with start_tool(command, limits, log_path, sandbox=Sandbox(…)) as tool:``
runs ``command`` (an ordinary NLP Sandbox tool listening on TCP, on ``port``,
also given to it as ``PORT``) in an existing, well-kept sandbox chosen by
:func:`nlpbench.runner.isolation.choose` (bubblewrap by default; see that
module for what the tool gets of the host: its runtime read-only, its own
directory read-only, size-limited ``tmpfs`` to write in, nothing else). The
network namespace has only its own loopback, so the tool cannot open a
connection to anything outside, the host's 127.0.0.1 included. The runner
makes a listening Unix socket in a private directory and hands it to
:mod:`nlpbench.runner.relay`, the sandbox's first program, as a descriptor;
the relay forwards each connection to the tool's port. ``tool.url`` and
``tool.transport()`` (a new ``httpx.AsyncHTTPTransport`` on that socket) are
what a client needs.

Limits. :mod:`nlpbench.runner.launch` puts the sandbox in a cgroup of its own
from its first instruction where one can be made (:mod:`nlpbench.runner.cgroup`:
root usually, a user namespace usually not); the kernel then enforces
``memory_bytes`` (resident memory and page cache, ``tmpfs`` files included,
swap included: past it the OOM killer ends a process, and the runner then
kills the rest with the reason "memory") and ``TASKS_PER_PROCESS × processes``
processes and threads (a fork past it fails; the runner then kills the tool
with the reason "processes"), and its accounting gives the memory held (the
cgroup's own count, not a sum over processes that counts shared pages again
and again) and the CPU time of every process, exited ones too. Without a
cgroup, the memory held is the sum of the processes' proportional set sizes
(PSS: a page shared by N processes counts 1/N in each), and ``RLIMIT_DATA``
at twice ``memory_bytes`` backs up the watch, which a tool allocating faster
than it polls can outrun. Everywhere: ``RLIMIT_CPU`` per process (the kernel
sends ``SIGXCPU``), no core files, and a watch every ``POLL_SECONDS`` that
kills the sandbox, with the reason kept in ``tool.outcome``, once the tool
holds more than ``memory_bytes``, has used more than ``cpu_seconds`` of CPU,
numbers more than ``processes`` processes, or once ``wall_seconds`` have
passed. Everything the sandbox prints goes to ``log_path``, cut at
``log_bytes``: a tool may print notes, so nothing of its output appears in any
message. At the end, or on any error, the sandbox gets ``SIGTERM``, then after
``grace_seconds`` ``SIGKILL``; ending the sandbox's first process ends every
process in it, and the cgroup, emptied the same way, is removed. A runner that
dies takes its sandboxes with it (the kernel's parent-death signal); what a
killed runner left on disk (its private directories, its empty cgroups) is
removed by the next runner on this machine (:func:`reap_leftovers`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from io import BufferedReader
from pathlib import Path
from typing import BinaryIO, cast

import httpx
import psutil

from nlpbench.runner.cgroup import make_cgroup, reap_cgroups
from nlpbench.runner.handoff import POOL, Handed, HandoffTransport, SyncHandoffTransport
from nlpbench.runner.isolation import (
    INSIDE,
    Fds,
    Launch,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    Setup,
    choose,
    tool_environment,
)
from nlpbench.runner.limits import Limits
from nlpbench.runner.mux import Bridge
from nlpbench.runner.podman import Podman, containers

__all__ = ["Limits", "Outcome", "Sandbox", "SandboxError", "SandboxUnavailable", "SandboxedTool", "start_tool"]

#: Seconds between two looks at the tool's memory, CPU time and processes.
POLL_SECONDS = 0.05
#: Seconds a stop waits for the processes it killed to be gone (a process in the kernel's uninterruptible
#: sleep may outlast it; nothing else can).
GONE_SECONDS = 10.0
HEALTH_PATH = "/api/v1/healthCheck"
#: Run as scripts (the standard library only), not with ``-m``: they start without importing the runner.
RELAY = Path(__file__).with_name("relay.py")
LAUNCH = Path(__file__).with_name("launch.py")
READ_CHUNK = 64 * 1024
#: A cgroup's ``pids.max`` is this many times ``Limits.processes``: the kernel counts threads too.
TASKS_PER_PROCESS = 16
#: The host threads a sandbox with a kernel of its own (gVisor's Sentry) may use; its tool's are limited inside.
SENTRY_TASKS = 4096
#: Programs of the sandbox itself, above the relay in its process tree (not the tool's).
SANDBOX_PROGRAMS = frozenset({"bwrap", "unshare"})
#: Private directories of running sandboxes: ``PREFIX<owner>-<random>`` in the temporary folder (short: the
#: socket's path in it must fit the 107 bytes of a Unix socket address).
PREFIX = "nbsb-"


@dataclass(frozen=True)
class Outcome:
    """How a sandboxed tool ended: its status, the limit it hit if any, and one line saying so."""

    returncode: int | None
    limit: str | None  # "memory", "cpu", "wall", "processes" or None
    stopped: bool  # ended by the runner at the end of its run
    reason: str
    peak_memory_bytes: int
    cpu_seconds: float
    log_bytes_dropped: int

    @property
    def ok(self) -> bool:
        """Stopped by the runner, having hit no limit."""
        return self.stopped and self.limit is None


def size(count: int) -> str:
    """``512 MiB``, ``1.5 GiB``, ``300 bytes``."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= factor:
            return f"{count / factor:.4g} {unit}"
    return f"{count} bytes"


@functools.cache
def owner() -> str:
    """This process as the owner of sandboxes: its id and start time (an id alone is reused once it dies)."""
    return _tag(psutil.Process())


def _tag(process: psutil.Process) -> str:
    return f"{process.pid}.{int(process.create_time() * 100):x}"


def owner_alive(tag: str) -> bool:
    """Whether the process that :func:`owner` named ``tag`` still runs."""
    try:
        return _tag(psutil.Process(int(tag.partition(".")[0]))) == tag
    except (ValueError, psutil.Error):  # no such process (or a malformed tag): not alive
        return False


#: The longest path of a Unix socket (``sun_path`` holds 108 bytes, the last a NUL).
SOCKET_PATH_BYTES = 107


def places() -> list[Path]:
    """Where private directories are made: the temporary folder, else (its path too long for a socket) the system's."""
    return [Path(place) for place in dict.fromkeys((tempfile.gettempdir(), "/tmp", "/dev/shm"))]


def private_directory() -> Path:
    """A new private (0700) directory whose socket path fits a Unix socket address."""
    for place in places():
        if len(os.fsencode(place / f"{PREFIX}{owner()}-12345678" / "s")) <= SOCKET_PATH_BYTES and os.access(
            place, os.W_OK
        ):
            return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{owner()}-", dir=place))
    raise SandboxError("no temporary folder here has a path short enough for the tool's socket")


@functools.cache
def reap_leftovers() -> None:
    """Remove what runners killed on this machine left: their sandboxes' private directories and empty cgroups."""
    for place in places():
        with suppress(OSError):  # the place is not there or not ours: nothing to reap
            for entry in place.glob(f"{PREFIX}*"):
                tag = entry.name.removeprefix(PREFIX).rpartition("-")[0]
                if entry.is_dir() and not entry.is_symlink() and not owner_alive(tag):
                    _remove_leftover(entry)
    reap_cgroups(owner_alive)


def _remove_leftover(folder: Path) -> None:
    """A dead runner's private directory: its container and images first (podman's mounts live there), then it."""
    if (folder / "podman").exists():
        from nlpbench.runner.podman import remove_storage

        remove_storage(folder)
    shutil.rmtree(folder, ignore_errors=True)


class SandboxedTool:
    """A tool running in the sandbox: :attr:`url`, :meth:`transport`, :attr:`pid`, and once it ends :attr:`outcome`."""

    url = "http://tool"

    def __init__(
        self,
        command: str,
        limits: Limits,
        log_path: Path,
        port: int,
        grace_seconds: float,
        sandbox: Sandbox,
        tool_dir: Path | None = None,
        files: dict[str, Path] | None = None,
        image: Path | str | None = None,
        plain_registry: bool = False,
    ):
        self.limits = limits
        self.grace_seconds = grace_seconds
        backend = containers(sandbox) if image is not None else choose(sandbox)
        reap_leftovers()
        # opened before anything starts (a bad path fails here); the thread copying the output closes it
        log = open(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")  # noqa: SIM115
        self._private = private_directory()
        self.socket_path = str(self._private / "s")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.socket_path)
        self._listener.listen(128)
        self._status_read, status_write = os.pipe()
        self._bridge: Bridge | None
        self._backend, self._bridge, self._companion = backend, None, None
        fds = Fds()
        #: The tool's cgroup, if one could be made here (else None: rlimits and the runner's watch only).
        tasks = TASKS_PER_PROCESS * limits.processes
        self.cgroup = make_cgroup(limits.memory_bytes, tasks if backend.visible else SENTRY_TASKS, owner())
        try:
            relay_path = f"{INSIDE}/relay.py" if backend.inside else str(RELAY)
            channel = ["stdio", "-"] if backend.stdio else [str(self._listener.fileno()), str(status_write)]
            relay = [sys.executable, "-I", "-S", relay_path, *channel, str(port), "-" if image else command]
            inside = (files or {}) | ({f"{INSIDE}/relay.py": RELAY} if backend.inside else {})
            environment = tool_environment(sandbox.runtime) | {"PORT": str(port)}
            tasks = TASKS_PER_PROCESS * limits.processes
            setup = Setup(
                relay,
                environment,
                self._private,
                tool_dir,
                inside,
                limits.network,
                tasks,
                limits.memory_bytes,
                image,
                plain_registry,
            )
            self._process = self._launch(backend.command(setup, fds), status_write)
            if isinstance(backend, Podman):  # the relay joins the container's network once the container runs
                argv = backend.companion(setup, alive=lambda: self._process.poll() is None)
                self._companion = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    pass_fds=(self._listener.fileno(), status_write),
                )
        except BaseException:
            log.close()
            if getattr(self, "_process", None) is not None:
                self._process.kill()
                self._process.wait()
            os.close(self._status_read)
            self._cleanup()
            raise
        finally:
            os.close(status_write)
            fds.close()
        #: The process id (on this host) of the sandbox's outermost process.
        self.pid = self._process.pid
        self.backend = backend.name
        self._visible = backend.visible
        self.outcome: Outcome | None = None
        self._started = time.monotonic()
        self._limit: tuple[str, str] | None = None
        self._stopping = False
        #: The sandbox's processes when a stop began: waited for once killed (see :func:`_until_gone`).
        self._tree: list[psutil.Process] = []
        self._peak_memory = 0
        self._cpu = 0.0
        self._dropped = 0
        self._ended = threading.Event()  # wakes the watch at the end rather than after its poll
        self._handed = Handed()  # the connections the relay handed over, ended with the tool
        self._logger = threading.Thread(target=self._copy_log, args=(log,), daemon=True)
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._logger.start()
        self._watcher.start()

    def _launch(self, launch: Launch, status_write: int) -> subprocess.Popen:
        """Start the sandbox through :mod:`nlpbench.runner.launch` (cgroup, rlimits, death with the runner)."""
        data_bytes = 0 if self.cgroup else 2 * self.limits.memory_bytes
        procs = ":".join(self.cgroup.procs_files) if self.cgroup else ""
        launcher = [sys.executable, "-I", "-S", str(LAUNCH), procs, str(max(1, int(self.limits.cpu_seconds)))]
        stdio = self._backend.stdio  # the connections travel on the standard streams, the output on stderr
        relay_fds = () if stdio or self._backend.companion_relay else (self._listener.fileno(), status_write)
        process = subprocess.Popen(
            [*launcher, str(data_bytes), "--", *launch.argv],
            cwd=launch.cwd or str(self._private),
            env=launch.env,
            stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if stdio else subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(*relay_fds, *launch.pass_fds),
        )
        # pipes of a process started with the default buffering are buffered readers and writers
        self._output = cast(BufferedReader, process.stderr if stdio else process.stdout)
        if stdio:
            self._bridge = Bridge(self._listener, cast(BinaryIO, process.stdin), cast(BinaryIO, process.stdout))
        return process

    def transport(self, limits: httpx.Limits = POOL) -> httpx.AsyncHTTPTransport:
        """A new asyncio transport reaching the tool (give it to ``httpx.AsyncClient`` with :attr:`url`): its
        connections are handed over by the relay (gVisor's travel as frames on the bridge's socket)."""
        if self._bridge is not None:
            return httpx.AsyncHTTPTransport(uds=self.socket_path, limits=limits)
        return HandoffTransport(self.socket_path, self._handed, limits)

    def sync_transport(self) -> httpx.HTTPTransport:
        """The same for a synchronous ``httpx.Client``."""
        if self._bridge is not None:
            return httpx.HTTPTransport(uds=self.socket_path)
        return SyncHandoffTransport(self.socket_path, self._handed)

    def wait_ready(self, timeout: float) -> None:
        """Return once GET /api/v1/healthCheck answers 200; a :class:`SandboxError` if the tool ends or never does."""
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.url, transport=self.sync_transport(), timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    reason = self._finish().reason
                    raise SandboxError(f"the tool ended before it answered GET {HEALTH_PATH}: {reason}")
                try:
                    if client.get(HEALTH_PATH).status_code == 200:
                        return
                except httpx.HTTPError:  # not listening yet: ask again until the deadline
                    pass
                time.sleep(0.1)
        raise SandboxError(f"the tool did not answer GET {HEALTH_PATH} within {timeout:g} s of starting")

    def wait(self, timeout: float | None = None) -> Outcome | None:
        """The outcome once the tool has ended by itself (or by a limit) within ``timeout`` seconds, else None."""
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:  # still running
            return None
        return self._finish()

    def stop(self) -> Outcome:
        """End the tool (``SIGTERM``, then ``SIGKILL`` to every process left after the grace period)."""
        if self._process.poll() is None:
            self._stopping = True
            # the namespace's first process leaves this tree as soon as the sandbox's own process ends
            self._tree = self._processes()
            self._signal(signal.SIGTERM)
            try:
                self._process.wait(self.grace_seconds)
            except subprocess.TimeoutExpired:
                self._kill()
        return self._finish()

    def _finish(self) -> Outcome:
        if self.outcome is not None:
            return self.outcome
        self._kill()  # whatever is left, should anything have escaped the sandbox's end
        self._process.wait()
        self._handed.shut()
        if self._bridge is not None:
            self._bridge.close()
        self._ended.set()
        self._watcher.join()
        self._logger.join()
        try:
            self.outcome = self._outcome()
        finally:
            os.close(self._status_read)
            self._cleanup()
        return self.outcome

    def _cleanup(self) -> None:
        """Remove the cgroup (killing what is in it), a container and its images, the socket, the private directory."""
        if self.cgroup:
            self.cgroup.remove()
        if self._companion is not None:
            self._companion.kill()
            self._companion.wait()
        if isinstance(self._backend, Podman):
            self._backend.clean()
        self._listener.close()
        shutil.rmtree(self._private, ignore_errors=True)

    def _returncode(self) -> int | None:
        """The tool's status as the relay wrote it, if it did (a sandbox killed first says nothing)."""
        if self._bridge is not None:
            return self._bridge.returncode
        if self._backend.companion_relay:  # the container's status is podman's
            return self._process.returncode
        os.set_blocking(self._status_read, False)
        # no status written (yet): the process's own is used
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            line = os.read(self._status_read, 4096).decode()
            returncode = json.loads(line)["returncode"]
            return returncode if isinstance(returncode, int) else None
        return None

    def _outcome(self) -> Outcome:
        returncode = self._returncode()
        limit, reason = self._limit or self._cgroup_limit() or (None, "")
        if limit is None and isinstance(self._backend, Podman) and self._backend.out_of_memory():
            limit, reason = "memory", f"the tool exceeded its memory limit of {size(self.limits.memory_bytes)}"
        if self.cgroup:  # the kernel's totals: every process, the exited ones too
            self._peak_memory = max(self._peak_memory, self.cgroup.peak_memory_bytes())
            self._cpu = max(self._cpu, self.cgroup.cpu_seconds() or 0.0)
        killed_by = _signal_of(returncode)
        if limit is None and killed_by == signal.SIGXCPU:
            limit, reason = "cpu", f"the tool exceeded its CPU limit of {self.limits.cpu_seconds:g} s"
        if not reason:
            if self._stopping:
                reason = "the tool was stopped at the end of its run"
            elif returncode is None:
                reason = f"the sandbox ended without the tool's status (status {self._process.returncode})"
            elif killed_by is not None:
                reason = f"the tool was killed by {killed_by.name}"
            else:
                reason = f"the tool exited with status {returncode}"
        return Outcome(
            returncode,
            limit,
            self._stopping and limit is None,
            reason,
            self._peak_memory,
            round(self._cpu, 3),
            self._dropped,
        )

    def _signal(self, number: int) -> None:
        with suppress(ProcessLookupError):  # the group ended meanwhile
            os.killpg(self.pid, number)

    def _processes(self) -> list[psutil.Process]:
        """The sandbox's own process and every process below it, now."""
        try:
            return [psutil.Process(self.pid), *psutil.Process(self.pid).children(recursive=True)]
        except psutil.NoSuchProcess:  # it has ended: nothing is below it any more
            return []

    def _kill(self) -> None:
        # the tree a stop began with too: once the sandbox's own process has ended on SIGTERM, what was below it
        # is no longer found from it, and would otherwise be left to end by the parent-death signal, in its time
        everything = [*self._processes(), *self._tree]
        for process in everything:
            with suppress(psutil.NoSuchProcess):  # ended meanwhile (psutil signals no process that took its PID)
                process.kill()
        self._signal(signal.SIGKILL)
        if self.cgroup:
            self.cgroup.kill()
        if isinstance(self._backend, Podman):  # the container runs under podman's monitor, not below us
            self._backend.stop()
        _until_gone(everything, GONE_SECONDS)

    def _copy_log(self, log: BinaryIO) -> None:
        """Everything the sandbox prints, up to ``log_bytes``; the rest is read and counted, never kept."""
        kept = 0
        with log:
            while chunk := self._output.read1(READ_CHUNK):
                room = max(0, self.limits.log_bytes - kept)
                log.write(chunk[:room])
                log.flush()
                kept += min(room, len(chunk))
                self._dropped += len(chunk) - min(room, len(chunk))
            if self._dropped:
                log.write(
                    f"\n[nlpbench: log cut at {self.limits.log_bytes} bytes; {self._dropped} more dropped]\n".encode()
                )
        self._output.close()

    def _watch(self) -> None:
        """Watch the limits until the tool ends, then end its connections (whichever way it ended)."""
        with suppress(psutil.NoSuchProcess):  # ended before the watch began: nothing to watch
            self._watch_limits(psutil.Process(self.pid))
        self._handed.shut()  # the tool has ended (or is being killed): no answer will come on its connections

    def _watch_limits(self, root: psutil.Process) -> None:
        """Every ``POLL_SECONDS`` until the tool ends: kill it at the first limit it passes."""
        while self._process.poll() is None:
            self._limit = self._limit or self._over_limit(root)
            if self._limit is not None:
                self._kill()
                break
            if self._ended.wait(POLL_SECONDS):
                break

    def _over_limit(self, root: psutil.Process) -> tuple[str, str] | None:
        """The limit the tool has passed, if any, with its one-line reason."""
        limits = self.limits
        if time.monotonic() - self._started > limits.wall_seconds:
            return "wall", f"the tool ran past its wall-time limit of {limits.wall_seconds:g} s"
        if found := self._cgroup_limit():
            return found
        tool = _tool_processes(root) if self._visible else _descendants(root)
        memory, cpu = _usage(tool, self.cgroup)
        self._peak_memory = max(self._peak_memory, memory)
        self._cpu = cpu = max(self._cpu, cpu, (self.cgroup and self.cgroup.cpu_seconds()) or 0.0)
        if memory > limits.memory_bytes:
            return "memory", f"the tool exceeded its memory limit of {size(limits.memory_bytes)}"
        if cpu > limits.cpu_seconds:
            return "cpu", f"the tool exceeded its CPU limit of {limits.cpu_seconds:g} s"
        if self._visible and len(tool) > limits.processes:
            return "processes", f"the tool started more than {limits.processes} processes"
        return None

    def _cgroup_limit(self) -> tuple[str, str] | None:
        """The limit the kernel enforced in the tool's cgroup, if it did: a fork refused, or an OOM kill.

        A refused fork is told first: a fork bomb fills memory too, but what it hit is the process limit.
        """
        if self.cgroup is None:
            return None
        if self.cgroup.pids_refused():
            return "processes", (
                f"the tool tried to start more than {self.limits.processes} processes "
                f"(the kernel refused a fork or thread past {TASKS_PER_PROCESS * self.limits.processes})"
            )
        if self.cgroup.oom_kills():
            return "memory", f"the tool exceeded its memory limit of {size(self.limits.memory_bytes)}"
        return None


def _tool_processes(root: psutil.Process) -> list[psutil.Process]:
    """The tool's processes: everything below the relay, the first process below the sandbox's own programs."""
    try:
        level = [root]
        while level and all(_name(process) in SANDBOX_PROGRAMS for process in level):
            level = [child for process in level for child in process.children()]
        return [process for relay in level for process in relay.children(recursive=True)]
    except psutil.NoSuchProcess:  # ended meanwhile: nothing runs
        return []


def _descendants(root: psutil.Process) -> list[psutil.Process]:
    """Everything the sandbox runs on the host (gVisor's Sentry and Gofer hold the tool's memory and CPU time)."""
    try:
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:  # ended meanwhile: nothing runs
        return []


def _name(process: psutil.Process) -> str:
    with suppress(psutil.Error):  # ended or hidden: no name
        return process.name()
    return ""


def _usage(processes: list[psutil.Process], cgroup) -> tuple[int, float]:
    """(bytes held, CPU seconds) of the tool: the cgroup's count of memory where there is one, else the PSS sum."""
    memory = cgroup.current_memory_bytes() if cgroup else 0
    cpu = 0.0
    for process in processes:
        try:
            if cgroup is None:
                memory += _proportional(process)
            times = process.cpu_times()
            cpu += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:  # ended meanwhile: it holds nothing now
            continue
    return int(memory), cpu


def _proportional(process: psutil.Process) -> int:
    """A process's proportional set size (its share of each page it shares), else its resident size."""
    try:
        return process.memory_full_info().pss
    except (psutil.AccessDenied, AttributeError):  # no PSS here: the resident size
        return process.memory_info().rss


def _signal_of(returncode: int | None) -> signal.Signals | None:
    """The signal that ended the tool: ``-N`` from :mod:`subprocess`, or ``128 + N`` from the shell that ran it."""
    if returncode is None or 0 <= returncode <= 128:
        return None
    try:
        return signal.Signals(-returncode if returncode < 0 else returncode - 128)
    except ValueError:  # no signal has that number
        return None


@contextmanager
def start_tool(
    command: str,
    limits: Limits,
    log_path: Path,
    *,
    sandbox: Sandbox | None = None,
    tool_dir: Path | None = None,
    files: dict[str, Path] | None = None,
    image: Path | str | None = None,
    plain_registry: bool = False,
    port: int = 8080,
    startup_seconds: float = 60.0,
    grace_seconds: float = 5.0,
) -> Iterator[SandboxedTool]:
    """Start ``command`` in the sandbox, wait until it answers GET /api/v1/healthCheck, and stop it at the end.

    ``tool_dir`` (bound read-only at its own path, and the tool's working
    directory) and ``files`` (inside path → host file, read-only) are all the
    tool gets of the host besides its runtime. With ``image`` (an OCI image
    archive's path, or ``REGISTRY/NAME@sha256:…`` to pull, without TLS when
    ``plain_registry``), the image is the tool, run by podman; ``command`` is then unused.
    """
    settings = sandbox or Sandbox()
    tool = SandboxedTool(
        command, limits, log_path, port, grace_seconds, settings, tool_dir, files, image, plain_registry
    )
    try:
        tool.wait_ready(startup_seconds)
        yield tool
    finally:
        tool.stop()


def _until_gone(processes: list[psutil.Process], seconds: float) -> None:
    """Return once every one of ``processes`` has ended (gone, or a zombie its parent has yet to reap), or after
    ``seconds``. A killed process shows as running until the kernel schedules its exit, and the first process
    of a PID namespace ends only after every process of the namespace has: waiting for all of them means that
    when a stop returns, nothing of the tool runs, however busy the machine."""
    deadline = time.monotonic() + seconds
    for process in processes:
        while time.monotonic() < deadline:
            try:
                if not process.is_running() or process.status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:  # reaped meanwhile: gone, which is what is waited for
                break
            time.sleep(POLL_SECONDS / 5)
