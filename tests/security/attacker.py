"""A team's tool that tries every way out of its sandbox before it serves, and says how each try ended.

``python attacker.py STORE MARKER`` (run by a worker as a team's ``--command``
tool) tries, in turn, to read, write, connect to, see, mount, trace, unshare,
fill and outlive what a sandboxed tool must not touch — ``STORE`` is the
worker's SQLite store file, ``MARKER`` a word its children carry so that the
test can look for them on the host afterwards — then prints one line
``ATTACK {json}`` mapping each try to ``"blocked: WHY"`` or to what it got,
and serves the baseline date annotator on ``$PORT`` so that the submission
goes on as any other. The test asserts that every try was blocked.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import platform
import signal
import socket
import subprocess
import sys
from pathlib import Path

store, marker = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
tried: dict[str, str] = {}


def attempt(name: str, action) -> None:
    """Run ``action``; what it returned (it got through) or ``blocked: ERROR`` (it did not)."""
    try:
        got = action()
    except Exception as error:  # every failure is the sandbox (or the kernel) saying no
        tried[name] = f"blocked: {type(error).__name__}"
        return
    tried[name] = f"GOT {str(got)[:200]}" if got else "blocked: nothing"


def read(path: str):
    with open(path, "rb") as handle:
        return handle.read(64)


def write(path: str):
    with open(path, "w") as handle:
        handle.write("import os; os.system('touch /tmp/owned')\n")
    return path


def connect_unix(path: str):
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(2)
        client.connect(path)
        return path


def connect_tcp(host: str, port: int):
    with socket.create_connection((host, port), timeout=2):
        return f"{host}:{port}"


def call(name: str, *args):
    """A libc call; an OSError when it fails (as the sandbox should make it)."""
    if getattr(libc, name)(*args) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return name


def traced_child():
    """``ptrace(PTRACE_TRACEME)`` in a child (which then exits): whether the call was allowed."""
    pid = os.fork()
    if pid == 0:
        os._exit(0 if libc.ptrace(0, 0, None, None) == 0 else 1)
    return os.waitpid(pid, 0)[1] == 0 and "PTRACE_TRACEME allowed"


def capabilities():
    status = Path("/proc/self/status").read_text()
    fields = dict(line.split(":\t") for line in status.splitlines() if ":\t" in line)
    held = {key: fields.get(key, "0").strip() for key in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh")}
    return {key: value for key, value in held.items() if int(value, 16)}


def sockets_in(*folders: str):
    found = []
    for folder in folders:
        for path in glob.glob(f"{folder}/**", recursive=True):
            try:
                if os.path.exists(path) and (os.stat(path).st_mode & 0o170000) == 0o140000:
                    found.append(path)
            except OSError:
                continue
    return found


def host_processes():
    """Processes other than the sandbox's own few: the host's, if /proc showed them."""
    pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    return pids if len(pids) > 12 else []


def secrets_in_environment():
    canaries = ("NLPBENCH_DB", "NLPBENCH_CANARY", "PGPASSWORD", "AWS_SECRET_ACCESS_KEY")
    seen = dict(os.environ)
    for pid in (1, os.getppid()):
        try:
            for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                name, _, value = entry.decode(errors="replace").partition("=")
                seen[name] = value
        except OSError:
            continue
    return [name for name in canaries if name in seen]


def fill_disk():
    """Write 64 MiB into the tool's home: its tmpfs is smaller (the test's worker gives it 16 MiB)."""
    chunk = b"x" * 2**20
    with open(os.path.join(os.environ["HOME"], "filler"), "wb") as handle:
        for _ in range(64):
            handle.write(chunk)
            handle.flush()
    return "64 MiB written"


def outlive():
    """A daemon (double fork, new session) that would stay after the tool: the test looks for it on the host."""
    subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", marker],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


sitepackages = [path for path in sys.path if path.endswith("site-packages")]
attempt("read /etc/shadow", lambda: read("/etc/shadow"))
attempt("read the store", lambda: read(store))
attempt("see the store in its folder", lambda: os.path.basename(store) in os.listdir(os.path.dirname(store)))
for secret in ("/root/.ssh", "/root/.bash_history", "/root/.pgpass", "/root/.config"):
    attempt(f"read {secret}", lambda secret=secret: os.listdir(secret) if os.path.isdir(secret) else read(secret))
attempt("list /home", lambda: [name for name in os.listdir("/home") if name != "tool"])
attempt("read the host's passwd", lambda: "root:x:0:0:root:/root" in Path("/etc/passwd").read_text() and "host's")
attempt("who am I (the sandbox's passwd unreadable)", lambda: not __import__("pwd").getpwuid(os.getuid()).pw_name)
attempt("plant a .pth in the runtime", lambda: write(os.path.join(sitepackages[0], "zz-evil.pth")))
attempt("write into /usr", lambda: write("/usr/evil"))
attempt("write into /", lambda: write("/evil"))
attempt("write into the tool's folder", lambda: write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "evil")))
attempt("PostgreSQL's Unix socket", lambda: connect_unix("/var/run/postgresql/.s.PGSQL.5432"))
attempt("PostgreSQL on the host's loopback", lambda: connect_tcp("127.0.0.1", 5432))
attempt("Redis on the host's loopback", lambda: connect_tcp("127.0.0.1", 6379))
attempt("the outside", lambda: connect_tcp("1.1.1.1", 80))
attempt("the host's Unix sockets", lambda: sockets_in("/run", "/var/run", "/tmp", "/root"))
attempt("the host's processes", host_processes)
attempt("secrets in the environment", secrets_in_environment)
attempt("capabilities", capabilities)
attempt("a user namespace", lambda: call("unshare", 0x10000000))
attempt("a mount namespace", lambda: call("unshare", 0x00020000))
attempt("mount a tmpfs", lambda: call("mount", b"none", b"/tmp", b"tmpfs", 0, None))
attempt("unmount /proc", lambda: call("umount2", b"/proc", 2))
attempt("ptrace", traced_child)
if platform.machine() == "x86_64":
    attempt("the kernel keyring", lambda: call("syscall", 250, 0, 0, 0, 0, 0))  # keyctl(GET_KEYRING_ID)
attempt("the cgroup hierarchy", lambda: os.listdir("/sys/fs/cgroup"))
attempt("kernel messages", lambda: read("/dev/kmsg"))
attempt("a block device", lambda: [path for path in glob.glob("/dev/*") if path.startswith(("/dev/sd", "/dev/vd"))])
attempt("fill the disk", fill_disk)
attempt("the host's name", lambda: socket.gethostname() != "tool" and socket.gethostname())
outlive()

print("ATTACK " + json.dumps(tried), flush=True)
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # it will not stop when asked: the sandbox must end it anyway
# then serve, as an honest tool would, so that the submission runs to its end (ignoring SIGTERM still)
os.execv(sys.executable, [sys.executable, "-m", "nlpbench", "serve", "-a", "date", "--port", os.environ["PORT"]])
