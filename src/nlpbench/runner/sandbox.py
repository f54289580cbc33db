"""Start a tool from a shell command in a process sandbox and reach it over a Unix socket.

``with start_tool(command, limits, workdir, log_path) as tool:`` runs ``command``
(an ordinary NLP Sandbox tool listening on TCP, on ``port``, also given to it as
``PORT``) in fresh network and PID namespaces (``unshare --net --pid`` as root,
``unshare --map-root-user …`` otherwise, in a user namespace where the tool is
root of nothing outside; refused with one line when neither works), with a
``/proc`` of its own where one can be mounted. The namespace has only its own
loopback, so the tool cannot open a connection to anything outside, the host's
127.0.0.1 included; :mod:`nlpbench.runner.relay`, its first process, forwards
a Unix socket in a private directory to the tool's port. ``tool.url`` and ``tool.transport()``
(a new ``httpx.AsyncHTTPTransport`` on that socket) are what a client needs.

Limits. Where a cgroup can be made (:mod:`nlpbench.runner.cgroup`: v2, or
the v1 ``memory`` and ``pids`` hierarchies, writable; root usually, a user
namespace usually not), the tool runs in one of its own from its first
instruction, and the kernel enforces ``memory_bytes`` (resident memory and
page cache, swap included: past it the OOM killer ends a process, and the
runner then kills the rest with the reason "memory") and
``TASKS_PER_PROCESS × processes`` processes and threads (a fork past it
fails; the runner then kills the tool with the reason "processes");
``RLIMIT_DATA`` is then not set, and the cgroup's CPU accounting (which keeps
the time of exited processes) makes the CPU total exact. Everywhere:
``RLIMIT_CPU`` per process (the kernel sends ``SIGXCPU``), and a watch every
``POLL_SECONDS`` over all the tool's processes that kills them all, with the
reason kept in ``tool.outcome``, once together they hold more than
``memory_bytes`` resident, have used more than ``cpu_seconds`` of CPU or
number more than ``processes``, or once ``wall_seconds`` have passed. Without
a cgroup, ``RLIMIT_DATA`` at twice ``memory_bytes`` backs up the watch, which
a tool allocating faster than it polls can outrun. The
tool runs in ``workdir`` with a small environment (``HOME`` is ``workdir``;
nothing of the runner's secrets), and everything it prints goes to
``log_path``, cut at ``log_bytes``: a tool may print notes, so nothing of
its output appears in any message. At the end, or on any error, the tool gets
``SIGTERM``, then after ``grace_seconds`` every process left gets ``SIGKILL``;
ending the namespace's first process ends every process in it, and the
cgroup, emptied the same way, is removed.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import httpx
import psutil

from nlpbench.runner.cgroup import make_cgroup

#: Seconds between two looks at the tool's memory, CPU time and processes.
POLL_SECONDS = 0.05
#: The environment variables a tool inherits from the runner (nothing else: no credentials).
PASSED_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH")
HEALTH_PATH = "/api/v1/healthCheck"
#: Run as a script (the standard library only), not with ``-m``: it starts without importing the runner.
RELAY = Path(__file__).with_name("relay.py")
READ_CHUNK = 64 * 1024
#: A cgroup's ``pids.max`` is this many times ``Limits.processes``: the kernel counts threads too.
TASKS_PER_PROCESS = 16


class SandboxError(Exception):
    """A tool that cannot be started in the sandbox or does not become ready; one line."""


class SandboxUnavailable(SandboxError):
    """No sandbox can be made on this machine (whatever the tool); one line."""


@dataclass(frozen=True)
class Limits:
    """What a sandboxed tool may use: bytes resident, CPU seconds, seconds in all, processes, log bytes.

    ``network=True`` leaves out the network namespace: the tool then listens on
    this machine, where its port must be free.
    """

    memory_bytes: int = 2 * 2**30
    cpu_seconds: float = 3600.0
    wall_seconds: float = 7200.0
    processes: int = 64
    log_bytes: int = 2**20
    network: bool = False


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
def namespace_command(network: bool) -> tuple[str, ...]:
    """The ``unshare`` invocation that works here: as root, or in a user namespace; else :class:`SandboxUnavailable`.

    Tried once per process with ``true`` as the command: first with a mount
    namespace and a ``/proc`` of the new PID namespace (the tool sees its own
    processes only, by the numbers it knows them by), then, where ``/proc``
    cannot be mounted (a container's masked ``/proc`` refuses a user
    namespace), without. The refusal names what failed and ``unshare``'s last
    line (its own words, never a tool's).
    """
    root = os.geteuid() == 0
    mapped = () if root else ("--map-root-user",)
    start = ("unshare", *mapped, *(() if network else ("--net",)), "--pid")
    for command in ((*start, "--mount-proc", "--fork", "--kill-child"), (*start, "--fork", "--kill-child")):
        if (why := _failure(command)) is None:
            return command
    if root:
        raise SandboxUnavailable(f"cannot start a sandbox here: `{shlex.join(command)}` failed as root: {why}")
    raise SandboxUnavailable(
        f"cannot start a sandbox here: not root, and user namespaces are not permitted "
        f"(`{shlex.join(command)}` failed: {why})"
    )


def _failure(command: tuple[str, ...]) -> str | None:
    """None if ``command true`` succeeds, else why not in a few words."""
    try:
        tried = subprocess.run([*command, "true"], capture_output=True, timeout=30)
    except FileNotFoundError:
        return "there is no unshare command"
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unshare did not run: {type(error).__name__}"
    if tried.returncode == 0:
        return None
    said = tried.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1][:200] if said else f"unshare exited with status {tried.returncode}"


class SandboxedTool:
    """A tool running in the sandbox: :attr:`url`, :meth:`transport`, :attr:`pid`, and once it ends :attr:`outcome`."""

    url = "http://tool"

    def __init__(self, command: str, limits: Limits, workdir: Path, log_path: Path, port: int, grace_seconds: float):
        self.limits = limits
        self.grace_seconds = grace_seconds
        namespace = namespace_command(limits.network)
        # opened before anything starts (a bad path fails here); the thread copying the output closes it
        log = open(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")  # noqa: SIM115
        self._private = Path(tempfile.mkdtemp(prefix="nlpbench-sandbox-"))  # short: a socket path has ≤ 107 bytes
        self.socket_path = str(self._private / "tool.sock")
        self._status_path = self._private / "status.json"
        environment = {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ}
        environment |= {"HOME": str(workdir), "PORT": str(port), "TMPDIR": str(workdir)}
        relay = [sys.executable, str(RELAY), self.socket_path, str(port), str(self._status_path)]
        #: The tool's cgroup, if one could be made here (else None: rlimits and the watch only).
        self.cgroup = make_cgroup(limits.memory_bytes, TASKS_PER_PROCESS * limits.processes)
        data_bytes = 0 if self.cgroup else 2 * limits.memory_bytes
        cgroup_procs = ":".join(self.cgroup.procs_files) if self.cgroup else ""
        limits_args = [str(max(1, int(limits.cpu_seconds))), str(data_bytes), cgroup_procs]
        try:
            self._process = subprocess.Popen(
                [*namespace, "--", *relay, *limits_args, command],
                cwd=workdir,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except BaseException:
            log.close()
            self._cleanup()
            raise
        #: The process id (on this host) of the sandbox's outermost process.
        self.pid = self._process.pid
        self.outcome: Outcome | None = None
        self._started = time.monotonic()
        self._limit: tuple[str, str] | None = None
        self._stopping = False
        self._peak_memory = 0
        self._cpu = 0.0
        self._dropped = 0
        self._ended = threading.Event()  # wakes the watch at the end rather than after its poll
        self._logger = threading.Thread(target=self._copy_log, args=(log,), daemon=True)
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._logger.start()
        self._watcher.start()

    def transport(self) -> httpx.AsyncHTTPTransport:
        """A new asyncio transport reaching the tool (give it to ``httpx.AsyncClient`` with :attr:`url`)."""
        return httpx.AsyncHTTPTransport(uds=self.socket_path)

    def sync_transport(self) -> httpx.HTTPTransport:
        """The same for a synchronous ``httpx.Client``."""
        return httpx.HTTPTransport(uds=self.socket_path)

    def wait_ready(self, timeout: float) -> None:
        """Return once GET /api/v1/healthCheck answers 200; a :class:`SandboxError` if the tool ends or never does."""
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.url, transport=self.sync_transport(), timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    self._finish()
                    raise SandboxError(f"the tool ended before it answered GET {HEALTH_PATH}: {self.outcome.reason}")
                try:
                    if client.get(HEALTH_PATH).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
        raise SandboxError(f"the tool did not answer GET {HEALTH_PATH} within {timeout:g} s of starting")

    def wait(self, timeout: float | None = None) -> Outcome | None:
        """The outcome once the tool has ended by itself (or by a limit) within ``timeout`` seconds, else None."""
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return self._finish()

    def stop(self) -> Outcome:
        """End the tool (``SIGTERM``, then ``SIGKILL`` to every process left after the grace period)."""
        if self._process.poll() is None:
            self._stopping = True
            self._signal(signal.SIGTERM)
            try:
                self._process.wait(self.grace_seconds)
            except subprocess.TimeoutExpired:
                self._kill()
        return self._finish()

    def _finish(self) -> Outcome:
        if self.outcome is not None:
            return self.outcome
        self._kill()  # whatever is left, should anything have escaped the namespace's end
        self._process.wait()
        self._ended.set()
        self._watcher.join()
        self._logger.join()
        try:
            self.outcome = self._outcome()
        finally:
            self._cleanup()
        return self.outcome

    def _cleanup(self) -> None:
        """Remove the cgroup (killing what is in it) and the private directory."""
        if self.cgroup:
            self.cgroup.remove()
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        self._status_path.unlink(missing_ok=True)
        self._private.rmdir()

    def _outcome(self) -> Outcome:
        returncode = None
        if self._status_path.exists():
            returncode = json.loads(self._status_path.read_text())["returncode"]
        limit, reason = self._limit or self._cgroup_limit() or (None, "")
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
        with suppress(ProcessLookupError):
            os.killpg(self.pid, number)

    def _kill(self) -> None:
        try:
            everything = [psutil.Process(self.pid), *psutil.Process(self.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            everything = []
        for process in everything:
            with suppress(psutil.NoSuchProcess):
                process.kill()
        self._signal(signal.SIGKILL)
        if self.cgroup:
            self.cgroup.kill()

    def _copy_log(self, log: BinaryIO) -> None:
        """Everything the sandbox prints, up to ``log_bytes``; the rest is read and counted, never kept."""
        kept = 0
        with log:
            while chunk := self._process.stdout.read1(READ_CHUNK):
                room = max(0, self.limits.log_bytes - kept)
                log.write(chunk[:room])
                log.flush()
                kept += min(room, len(chunk))
                self._dropped += len(chunk) - min(room, len(chunk))
            if self._dropped:
                log.write(
                    f"\n[nlpbench: log cut at {self.limits.log_bytes} bytes; {self._dropped} more dropped]\n".encode()
                )
        self._process.stdout.close()

    def _watch(self) -> None:
        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        while self._process.poll() is None:
            self._limit = self._limit or self._over_limit(root)
            if self._limit is not None:
                self._kill()
                break
            if self._ended.wait(POLL_SECONDS):
                break

    def _over_limit(self, root: psutil.Process) -> tuple[str, str] | None:
        """The limit the tool's processes (those below the relay) have passed, if any, with its one-line reason."""
        limits = self.limits
        if time.monotonic() - self._started > limits.wall_seconds:
            return "wall", f"the tool ran past its wall-time limit of {limits.wall_seconds:g} s"
        if found := self._cgroup_limit():
            return found
        try:
            relays = root.children()
            tool = [process for relay in relays for process in relay.children(recursive=True)]
        except psutil.NoSuchProcess:
            return None
        memory = cpu = 0.0
        for process in tool:
            try:
                memory += process.memory_info().rss
                times = process.cpu_times()
                cpu += times.user + times.system + times.children_user + times.children_system
            except psutil.NoSuchProcess:
                continue
        self._peak_memory = max(self._peak_memory, int(memory))
        self._cpu = max(self._cpu, cpu, (self.cgroup and self.cgroup.cpu_seconds()) or 0.0)
        cpu = self._cpu
        if memory > limits.memory_bytes:
            return "memory", f"the tool exceeded its memory limit of {size(limits.memory_bytes)}"
        if cpu > limits.cpu_seconds:
            return "cpu", f"the tool exceeded its CPU limit of {limits.cpu_seconds:g} s"
        if len(tool) > limits.processes:
            return "processes", f"the tool started more than {limits.processes} processes"
        return None

    def _cgroup_limit(self) -> tuple[str, str] | None:
        """The limit the kernel enforced in the tool's cgroup, if it did: an OOM kill, or a fork refused."""
        if self.cgroup is None:
            return None
        if self.cgroup.oom_kills():
            return "memory", f"the tool exceeded its memory limit of {size(self.limits.memory_bytes)}"
        if self.cgroup.pids_refused():
            return "processes", (
                f"the tool tried to start more than {self.limits.processes} processes "
                f"(the kernel refused a fork or thread past {TASKS_PER_PROCESS * self.limits.processes})"
            )
        return None


def _signal_of(returncode: int | None) -> signal.Signals | None:
    """The signal that ended the tool: ``-N`` from :mod:`subprocess`, or ``128 + N`` from the shell that ran it."""
    if returncode is None or 0 <= returncode <= 128:
        return None
    try:
        return signal.Signals(-returncode if returncode < 0 else returncode - 128)
    except ValueError:
        return None


@contextmanager
def start_tool(
    command: str,
    limits: Limits,
    workdir: Path,
    log_path: Path,
    *,
    port: int = 8080,
    startup_seconds: float = 60.0,
    grace_seconds: float = 5.0,
) -> Iterator[SandboxedTool]:
    """Start ``command`` in the sandbox, wait until it answers GET /api/v1/healthCheck, and stop it at the end."""
    workdir.mkdir(parents=True, exist_ok=True)
    tool = SandboxedTool(command, limits, workdir, log_path, port, grace_seconds)
    try:
        tool.wait_ready(startup_seconds)
        yield tool
    finally:
        tool.stop()
