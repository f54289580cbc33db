"""Which existing sandbox runs a tool, and the command line that starts it there.

nlpbench never makes a sandbox of its own: a team's tool runs in bubblewrap
(``bwrap``, the default), in gVisor (``runsc``, behind a setting), or, only
where the organiser allows it for public data, in the weaker ``unshare``
fallback. :func:`choose` picks one (:class:`SandboxUnavailable` with one line
when none works here); :meth:`Backend.command` gives its argument list.

What a tool gets from bubblewrap (:class:`Bubblewrap`):

- new PID, IPC, UTS, network (loopback only; the runner reaches the tool
  through a listening socket it hands over as a file descriptor, never a path
  the tool could see) and cgroup namespaces; a user namespace too when the
  runner is not root;
- an empty root of bubblewrap's, read-only, holding only the runtime
  (:attr:`Sandbox.runtime`, bound read-only at the same paths: the system's
  ``/usr`` and libraries, the Python that runs nlpbench, whatever the
  organiser adds), the tool's own directory (read-only), a ``/proc`` of its
  own PID namespace (never the host's), a minimal ``/dev``, size-limited
  ``tmpfs`` at ``/tmp`` and at ``/work`` (its ``HOME``), and a ``/etc``
  with a ``passwd``, ``group``, ``hosts`` and ``nsswitch.conf`` of ours —
  nothing of the store, of the host's other files or of its Unix sockets;
- as root: bubblewrap itself runs as root (so it can bind a runtime below a
  directory others may not search), keeps only ``CAP_SETUID``,
  ``CAP_SETGID`` and ``CAP_SETPCAP`` for the tool's first process, which is
  ``setpriv`` switching to :attr:`Sandbox.uid` with no groups, an empty
  bounding set and no capability at all before anything of the tool runs;
  not root: bubblewrap's user namespace, every capability dropped and new
  user namespaces disabled inside;
- ``--die-with-parent`` (the runner's death ends the sandbox), a new
  session (no terminal to inject into), and a seccomp filter
  (:mod:`nlpbench.runner.seccomp`) where libseccomp is installed.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nlpbench.errors import Kind, NlpbenchError

#: The sandboxes nlpbench knows, strongest first; ``auto`` takes the first that works here.
BACKENDS = ("bwrap", "runsc", "unshare")
#: System paths every runtime holds (those that exist here): programs, libraries, the loader's cache.
SYSTEM_RUNTIME = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/ssl",
    "/etc/mime.types",
)
#: Where the relay script and the tool's inputs appear inside the sandbox.
INSIDE = "/.nlpbench"
#: The tool's home and working directory inside the sandbox (a size-limited tmpfs).
HOME = "/home/tool"
#: The unprivileged user and group a root runner's tools run as (``nobody`` on Debian).
NOBODY = 65534
#: The environment a tool gets (nothing of the runner's: no credentials, no store URL).
PATH = "/usr/local/bin:/usr/bin:/bin"


class SandboxError(NlpbenchError):
    """A tool that cannot be started in the sandbox or does not become ready; one line."""

    kind = Kind.tool


class SandboxUnavailable(SandboxError):
    """No sandbox that the settings allow can be made on this machine (whatever the tool); one line."""

    kind = Kind.unavailable


@dataclass(frozen=True)
class Sandbox:
    """How to sandbox a tool: which backend, what of the host it gets, as whom, and how much disk.

    ``runtime`` adds host paths (bound read-only at the same paths) to
    :data:`SYSTEM_RUNTIME` and to the Python that runs nlpbench; ``weak``
    allows the ``unshare`` fallback, which isolates the network and processes
    only (the tool sees the host's files as the runner's user): an organiser's
    choice for public data, never the default.
    """

    backend: str = "auto"
    runtime: tuple[str, ...] = ()
    uid: int = NOBODY
    gid: int = NOBODY
    disk_bytes: int = 256 * 2**20
    weak: bool = False

    def paths(self) -> list[Path]:
        """Every host path the tool's runtime binds: the system's, nlpbench's Python and sources, the organiser's."""
        wanted = [*SYSTEM_RUNTIME, *python_runtime(), *self.runtime]
        return [Path(path) for path in dict.fromkeys(os.path.normpath(p) for p in wanted) if os.path.lexists(path)]


def python_runtime() -> list[str]:
    """The Python that runs nlpbench: its prefixes, nlpbench's sources when installed elsewhere, ``$PYTHONPATH``."""
    import nlpbench

    places = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.realpath(nlpbench.__file__)))}
    places |= {os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    places |= {os.path.realpath(entry) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry}
    return sorted(place for place in places if place not in ("/", "/usr"))


@dataclass(frozen=True)
class Setup:
    """What one tool's sandbox holds: the relay's command line (run inside), the whole environment, a private
    host folder of the runner's (removed at the end), the tool's own directory and files (inside path → host
    file), read-only, or the image that is the tool (an OCI archive's path, or a pinned reference to pull); the
    processes and threads it may have and the memory; ``network=True`` (tests' controls only) keeps the host's
    network."""

    relay: list[str]
    environment: dict[str, str]
    workspace: Path
    tool_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    network: bool = False
    tasks: int = 1024
    memory_bytes: int = 2 * 2**30
    image: Path | str | None = None
    #: An ``image`` given as ``REGISTRY/NAME@sha256:…`` is pulled; from a registry without TLS when this is true.
    plain_registry: bool = False


@dataclass(frozen=True)
class Launch:
    """What starts one sandbox: the argument list, the descriptors it inherits, its working folder, its environment."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=lambda: {"PATH": PATH})


@dataclass
class Backend:
    """One sandbox: its name, its settings, and how to start a :class:`Setup` in it.

    ``stdio``: the sandbox passes the relay nothing but its standard streams
    (the runner's connections then travel as frames: :mod:`nlpbench.runner.mux`);
    ``inside``: the relay script is bound into the sandbox at ``INSIDE`` (else
    it runs from nlpbench's own folder, which the tool then sees);
    ``visible``: the tool's processes are the host's (not those of a kernel of the sandbox's own);
    ``companion_relay``: the relay runs beside the sandbox, joining its network (a container's).
    """

    name: str
    settings: Sandbox = field(default_factory=Sandbox)
    stdio = False
    inside = True
    visible = True
    companion_relay = False

    def command(self, setup: Setup, fds: Fds) -> Launch:
        """The argument list (and descriptors) that start ``setup`` in this sandbox."""
        raise NotImplementedError


class Fds:
    """Descriptors handed to a sandbox (kept open by the runner until :meth:`close`): data files and the filter."""

    def __init__(self) -> None:
        self.opened: list[int] = []

    def data(self, content: bytes) -> int:
        """A descriptor to read ``content`` from (a memfd: nothing on disk)."""
        fd = os.memfd_create("nlpbench", 0)
        os.write(fd, content)
        os.lseek(fd, 0, os.SEEK_SET)
        self.opened.append(fd)
        return fd

    def close(self) -> None:
        for fd in self.opened:
            os.close(fd)
        self.opened.clear()


def _is_root() -> bool:
    return os.geteuid() == 0


def etc_files(uid: int, gid: int) -> dict[str, bytes]:
    """The ``/etc`` a sandboxed tool sees: who it is, that ``localhost`` is loopback, and files-only lookups."""
    return {
        "/etc/passwd": f"root:x:0:0:root:/:/usr/sbin/nologin\ntool:x:{uid}:{gid}:tool:{HOME}:/bin/sh\n".encode(),
        "/etc/group": f"root:x:0:\ntool:x:{gid}:\n".encode(),
        "/etc/hosts": b"127.0.0.1 localhost\n::1 localhost\n",
        "/etc/nsswitch.conf": b"passwd: files\ngroup: files\nhosts: files\n",
        "/etc/hostname": b"tool\n",
    }


class Bubblewrap(Backend):
    """bubblewrap (Debian ``bubblewrap``): namespaces, a minimal read-only root, no capabilities, seccomp."""

    def command(self, setup: Setup, fds: Fds) -> Launch:
        from nlpbench.runner import seccomp

        settings, root = self.settings, _is_root()
        uid, gid = (settings.uid, settings.gid) if root else (os.getuid(), os.getgid())
        argv = ["bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        argv += [] if setup.network else ["--unshare-net"]
        if root:
            kept = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")  # for setpriv, below, which drops them
            argv += ["--cap-drop", "ALL", *(word for cap in kept for word in ("--cap-add", cap))]
        else:
            argv += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
        argv += ["--die-with-parent", "--new-session", "--hostname", "tool"]
        argv += ["--proc", "/proc", "--dev", "/dev"]
        for place in ("/tmp", HOME):
            argv += ["--perms", "01777", "--size", str(settings.disk_bytes), "--tmpfs", place]
        argv += _runtime_binds(settings.paths())
        for path, content in etc_files(uid, gid).items():
            argv += ["--perms", "0644", "--ro-bind-data", str(fds.data(content)), path]
        for inside, outside in setup.files.items():
            argv += [*_folders_above(inside), "--ro-bind", str(outside), inside]
        if setup.tool_dir is not None:
            argv += _runtime_binds([setup.tool_dir])
        argv += ["--remount-ro", "/", "--chdir", str(setup.tool_dir or HOME), "--clearenv"]
        for name, value in setup.environment.items():
            argv += ["--setenv", name, value]
        if (program := seccomp.program()) is not None:
            argv += ["--seccomp", str(fds.data(program))]
        drop = []
        if root:
            drop = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
            drop += ["--bounding-set=-all", "--inh-caps=-all", "--"]
        return Launch([*argv, "--", *drop, *setup.relay], tuple(fds.opened))


def tool_environment(runtime: Iterable[str] = ()) -> dict[str, str]:
    """A tool's whole environment: a ``PATH`` (the ``bin`` folders of the Python that runs nlpbench and of the
    ``runtime`` paths, then the system's), its home and temporary folders, a UTF-8 locale, and the
    ``PYTHONPATH`` nlpbench runs with (part of the Python runtime it shares)."""
    folders = [os.path.join(place, "bin") for place in (sys.prefix, sys.base_prefix, *runtime)]
    path = ":".join([*dict.fromkeys(folder for folder in folders if os.path.isdir(folder)), PATH])
    environment = {"PATH": path, "HOME": HOME, "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    if os.environ.get("PYTHONPATH"):
        environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return environment


def _runtime_binds(paths: Iterable[Path]) -> list[str]:
    """``--ro-bind P P`` for each path, or ``--symlink`` where the host has a symbolic link (``/bin`` → ``usr/bin``)."""
    argv: list[str] = []
    for path in sorted(paths, key=lambda p: len(p.parts)):
        if path.is_symlink() and len(path.parts) == 2:
            argv += ["--symlink", os.readlink(path), str(path)]
        else:
            argv += [*_folders_above(path), "--ro-bind", str(path), str(path)]
    return argv


def _folders_above(path: Path | str) -> list[str]:
    """``--dir`` for each folder above ``path``, searchable by all (bubblewrap would make them 0700, which the
    tool's unprivileged user could not pass); a folder made already is left as it is."""
    return [word for folder in reversed(Path(path).parents) if folder != Path("/") for word in
            ("--perms", "0755", "--dir", str(folder))]  # fmt: skip


class Unshare(Backend):
    """The weak fallback: ``unshare`` network and PID namespaces only; the tool sees the host as the runner does."""

    inside = False

    def command(self, setup: Setup, fds: Fds) -> Launch:
        if setup.files:
            raise SandboxUnavailable("the unshare fallback runs commands only, not uploaded tools")
        home = str(setup.tool_dir or setup.workspace)  # the host's folders: its own, or the runner's private one
        environment = setup.environment | {"HOME": home, "TMPDIR": home}
        start = [word for word in unshare_command() if not (setup.network and word == "--net")]
        return Launch([*start, "--", *setup.relay], tuple(fds.opened), home, environment)


@functools.cache
def unshare_command() -> tuple[str, ...]:
    """The ``unshare`` invocation that works here: as root, or in a user namespace; else :class:`SandboxUnavailable`.

    Tried once per process with ``true`` as the command: first with a mount
    namespace and a ``/proc`` of the new PID namespace, then, where ``/proc``
    cannot be mounted, without.
    """
    mapped = () if _is_root() else ("--map-root-user",)
    start = ("unshare", *mapped, "--net", "--pid")
    for command in ((*start, "--mount-proc", "--fork", "--kill-child"), (*start, "--fork", "--kill-child")):
        if (why := failure([*command, "true"])) is None:
            return command
    raise SandboxUnavailable(f"cannot start the unshare fallback here: `{shlex.join(command)}` failed: {why}")


@functools.cache
def bubblewrap_works() -> str | None:
    """None when bubblewrap can start a sandbox here as this runner will, else why not (a few words)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    probe = Bubblewrap("bwrap", Sandbox(runtime=()))
    fds = Fds()
    try:
        launch = probe.command(Setup(["true"], tool_environment(), Path("/")), fds)
        return failure(launch.argv, pass_fds=launch.pass_fds)
    finally:
        fds.close()


def failure(argv: list[str], pass_fds: tuple[int, ...] = ()) -> str | None:
    """None if ``argv`` succeeds, else why not in a few words (the program's last line, never a tool's)."""
    try:
        tried = subprocess.run(argv, capture_output=True, timeout=30, pass_fds=pass_fds, stdin=subprocess.DEVNULL)
    except FileNotFoundError:  # the reason, for the caller's message
        return f"there is no {argv[0]} command"
    except (OSError, subprocess.TimeoutExpired) as error:  # the reason, by type only
        return f"{argv[0]} did not run: {type(error).__name__}"
    if tried.returncode == 0:
        return None
    said = tried.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1][:200] if said else f"{argv[0]} exited with status {tried.returncode}"


def choose(settings: Sandbox) -> Backend:
    """The backend that runs tools here under ``settings``; :class:`SandboxUnavailable` (one line) when none may."""
    if settings.backend not in ("auto", *BACKENDS):
        raise SandboxUnavailable(f"unknown sandbox {settings.backend!r}; known: auto, {', '.join(BACKENDS)}")
    wanted = ("bwrap", "runsc") if settings.backend == "auto" else (settings.backend,)
    reasons = []
    for name in wanted:
        if name == "unshare" and not settings.weak:
            raise SandboxUnavailable(
                "the unshare fallback isolates only the network and processes: allow it for public data explicitly"
            )
        why = _works(name)
        if why is None:
            return BACKEND_TYPES[name](name, settings)
        reasons.append(f"{name}: {why}")
    if settings.backend == "auto" and settings.weak and _works("unshare") is None:
        return Unshare("unshare", settings)
    raise SandboxUnavailable(f"no sandbox can run a tool here ({'; '.join(reasons)})")


def _works(name: str) -> str | None:
    if name == "bwrap":
        return bubblewrap_works()
    if name == "runsc":
        from nlpbench.runner.gvisor import gvisor_works

        return gvisor_works()
    try:
        unshare_command()
    except SandboxUnavailable as error:  # the reason, for the caller's message
        return str(error)
    return None


def _gvisor(name: str, settings: Sandbox) -> Backend:
    from nlpbench.runner.gvisor import Gvisor

    return Gvisor(name, settings)


BACKEND_TYPES = {"bwrap": Bubblewrap, "runsc": _gvisor, "unshare": Unshare}
