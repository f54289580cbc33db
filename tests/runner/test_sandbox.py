"""The sandbox, each backend that works here: no network, limits with clear reasons, the whole process tree ended,
a capped log. What a tool may *not* do to the host is tried in ``tests/security``."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import textwrap
import time
import uuid
from dataclasses import replace
from pathlib import Path

import httpx
import psutil
import pytest

from nlpbench.runner import sandbox
from nlpbench.runner.isolation import Sandbox, SandboxUnavailable, choose
from nlpbench.runner.sandbox import Limits, SandboxError, start_tool

#: A minimal NLP Sandbox-like tool: answers every GET with a passing health check, on $PORT.
TOOL = """\
import http.server, json, os, subprocess, sys, threading, time

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{{"status": "pass"}}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

{before}
server = http.server.ThreadingHTTPServer(("0.0.0.0", int(os.environ["PORT"])), Handler)
{after}
server.serve_forever()
"""
QUICK = Limits(memory_bytes=256 * 2**20, cpu_seconds=20, wall_seconds=30, processes=8, log_bytes=2**16)


def tool_command(tmp_path: Path, before: str = "", after: str = "") -> str:
    """The tool above, written to ``tmp_path/tool/tool.py`` (its own directory), and the command that starts it."""
    folder = tmp_path / "tool"
    folder.mkdir(exist_ok=True)
    (folder / "tool.py").write_text(TOOL.format(before=textwrap.dedent(before), after=textwrap.dedent(after)))
    return f"{sys.executable} tool.py"


def reported(tmp_path: Path) -> dict:
    """What the tool printed as ``REPORT {json}`` (a sandboxed tool can write nowhere the host reads but its log)."""
    for line in (tmp_path / "tool.log").read_text().splitlines():
        if line.startswith("REPORT "):
            return json.loads(line.removeprefix("REPORT "))
    raise AssertionError("the tool reported nothing")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def listener():
    """A TCP server on the host's 127.0.0.1 (the kernel completes connections to it without accept())."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


CONNECT = """\
results = {{}}
for name, address in (("host", ("127.0.0.1", {port})), ("public", ("1.1.1.1", 80))):
    try:
        socket.create_connection(address, timeout=3).close()
        results[name] = "connected"
    except OSError as error:
        results[name] = type(error).__name__
print("REPORT", json.dumps(results), flush=True)
"""


def test_a_tool_cannot_reach_the_host_or_the_outside(tmp_path, started, listener):
    command = tool_command(tmp_path, before="import socket\n" + CONNECT.format(port=listener))
    with started(command) as tool:
        pass
    results = reported(tmp_path)
    assert results["host"] in ("ConnectionRefusedError", "TimeoutError", "OSError")
    assert results["public"] != "connected"
    assert tool.outcome.ok, tool.outcome.reason


def test_with_network_allowed_the_same_tool_reaches_the_host(tmp_path, started, sandboxing, listener):
    """The control: the connection above fails because of the sandbox, not because of the test."""
    if sandboxing.backend == "runsc":
        pytest.skip("gVisor's host network is never used: its control is the bwrap one")
    command = tool_command(tmp_path, before="import socket\n" + CONNECT.format(port=listener))
    limits = replace(QUICK, network=True)
    with started(command, limits, port=free_port()):
        pass
    assert reported(tmp_path)["host"] == "connected"


def test_the_tool_is_reached_through_its_transport_and_works_in_its_own_directory(tmp_path, started, sandboxing):
    before = """\
    home = os.environ["HOME"]
    open(os.path.join(home, "written"), "w").write("x")
    print("REPORT", json.dumps({"cwd": os.getcwd(), "home": home, "files": os.listdir(home)}), flush=True)
    """
    with started(tool_command(tmp_path, before=before)) as tool:

        async def health():
            async with httpx.AsyncClient(base_url=tool.url, transport=tool.transport()) as client:
                return (await client.get("/api/v1/healthCheck")).json()

        assert asyncio.run(health()) == {"status": "pass"}
        assert psutil.pid_exists(tool.pid)
    where = reported(tmp_path)
    assert where["cwd"] == str(tmp_path / "tool")
    assert "written" in where["files"]
    if sandboxing.backend == "bwrap":  # a home of its own, gone with the sandbox
        assert where["home"] == "/home/tool" and not (tmp_path / "tool" / "written").exists()
    assert tool.outcome.stopped and tool.outcome.reason == "the tool was stopped at the end of its run"


def test_once_the_tool_has_ended_a_request_fails_at_once_rather_than_at_its_timeout(tmp_path, started):
    """A connection asked of a relay that ended would wait for an answer that never comes: the end wakes it."""
    exit_on_post = """\
    def do_POST(self):
        os._exit(3)
    Handler.do_POST = do_POST
    """
    with started(tool_command(tmp_path, before=exit_on_post)) as tool:

        async def requests() -> list[type[Exception] | int]:
            seen: list[type[Exception] | int] = []
            timeout = httpx.Timeout(120.0)
            async with httpx.AsyncClient(base_url=tool.url, transport=tool.transport(), timeout=timeout) as client:
                seen.append((await client.get("/api/v1/healthCheck")).status_code)
                for method in ("POST", "GET"):
                    try:
                        seen.append((await client.request(method, "/api/v1/textDateAnnotations")).status_code)
                    except httpx.HTTPError as error:
                        seen.append(type(error))
                    await asyncio.to_thread(_ended, tool.pid)  # the tool has ended before the next request
            return seen

        status, during, after = asyncio.run(requests())
    assert status == 200
    assert isinstance(during, type) and issubclass(during, httpx.TransportError)
    # Refused, or taken and closed (unread: a reset; read: an end of stream) by a bridge or relay that has not yet
    # heard of the end: never a timeout waited out.
    assert after in (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)
    assert tool.outcome.returncode == 3


def _ended(pid: int) -> None:
    """Return once the process ``pid`` has ended (reaped or a zombie), without reaping it: the runner does."""
    for _ in range(600):
        if not _alive_pid(pid):
            return
        time.sleep(0.05)
    raise AssertionError("the tool did not end")


def _alive_pid(pid: int) -> bool:
    try:
        return _alive(psutil.Process(pid))
    except psutil.NoSuchProcess:
        return False


def test_a_tool_exceeding_its_memory_limit_is_killed_with_the_reason(tmp_path, started):
    grow = """\
    answered = threading.Event()  # grows once it has answered its health check: a loaded machine starts slowly
    answer = Handler.do_GET
    def do_GET(self):
        answer(self)
        answered.set()
    Handler.do_GET = do_GET
    def grow():
        answered.wait()
        held = []
        while True:
            held.append(bytearray(b"x" * 8 * 2**20))
            time.sleep(0.05)
    threading.Thread(target=grow, daemon=True).start()
    """
    limits = replace(QUICK, memory_bytes=96 * 2**20)
    with started(tool_command(tmp_path, after=grow), limits) as tool:
        outcome = tool.wait(25)
    assert outcome is not None and outcome.limit == "memory"
    assert outcome.reason == "the tool exceeded its memory limit of 96 MiB"
    assert outcome.peak_memory_bytes >= 96 * 2**20  # the kernel holds a cgroup at its limit; the watch sees past it
    assert not outcome.ok


def test_a_tool_exceeding_its_cpu_limit_is_killed_with_the_reason(tmp_path, started):
    spin = """\
    def spin():
        while True:
            pass
    threading.Thread(target=spin, daemon=True).start()
    """
    # gVisor's Sentry spends about a second of CPU starting the tool, counted as the tool's: the limit leaves room
    limits = replace(QUICK, cpu_seconds=4, wall_seconds=120)
    with started(tool_command(tmp_path, after=spin), limits) as tool:
        outcome = tool.wait(110)
    assert outcome is not None and outcome.limit == "cpu"
    assert outcome.reason == "the tool exceeded its CPU limit of 4 s"


FORK = """\
children = [subprocess.Popen(["sleep", "300"]) for _ in range(2)]
children.append(subprocess.Popen(["sleep", "300"], start_new_session=True))
"""


def test_at_its_wall_time_limit_the_tool_and_all_its_children_are_killed(tmp_path, started, sandboxing):
    limits = replace(QUICK, wall_seconds=3)
    with started(tool_command(tmp_path, before=FORK), limits) as tool:
        everything = [psutil.Process(tool.pid), *psutil.Process(tool.pid).children(recursive=True)]
        if sandboxing.backend != "runsc":  # gVisor's tool processes live in its Sentry, not on the host
            assert sum(process.name() == "sleep" for process in everything) == 3
        outcome = tool.wait(20)
    assert outcome is not None and outcome.limit == "wall"
    assert outcome.reason == "the tool ran past its wall-time limit of 3 s"
    assert not [process for process in everything if _alive(process)]


def test_stopping_a_tool_ends_its_children_too(tmp_path, started):
    with started(tool_command(tmp_path, before=FORK)) as tool:
        everything = [psutil.Process(tool.pid), *psutil.Process(tool.pid).children(recursive=True)]
    assert len(everything) >= 5  # the sandbox's own process(es), relay, shell or tool, three sleeps
    assert not [process for process in everything if _alive(process)]
    assert tool.outcome.ok


def test_a_tool_starting_too_many_processes_is_killed_with_the_reason(tmp_path, started, sandboxing):
    if sandboxing.backend == "runsc":
        pytest.skip("gVisor refuses the fork itself: see test_under_gvisor_a_fork_past_the_limit_fails")
    limits = replace(QUICK, processes=2)
    later = 'threading.Timer(1, lambda: [subprocess.Popen(["sleep", "300"]) for _ in range(4)]).start()'
    with started(tool_command(tmp_path, after=later), limits) as tool:
        outcome = tool.wait(20)
    assert outcome is not None and outcome.reason == "the tool started more than 2 processes"


#: A model of 160 MiB loaded once, then 4 helpers forked: they share its pages (copy on write), ~180 MiB in all.
MODEL = """\
model = b"m" * (160 * 2**20)
for _ in range(4):
    if os.fork() == 0:
        time.sleep(300)
        os._exit(0)
"""


@pytest.fixture(params=["cgroup", "pss"])
def accounting(request, monkeypatch) -> str:
    """How the watch counts memory: the cgroup's own count (where one can be made), or PSS without a cgroup."""
    if request.param == "pss":
        monkeypatch.setattr(sandbox, "make_cgroup", lambda *_args: None)
    return request.param


def test_a_model_shared_by_forked_helpers_is_counted_once(tmp_path, started, sandboxing, accounting):
    if sandboxing.backend == "runsc":
        pytest.skip("gVisor's tool processes live in its Sentry: the host sees neither their RSS nor their PSS")
    limits = replace(QUICK, memory_bytes=512 * 2**20)
    with started(tool_command(tmp_path, before=MODEL), limits) as tool:
        assert tool.wait(1.5) is None  # some thirty looks of the watch, and the tool is still running
        tree = psutil.Process(tool.pid).children(recursive=True)
        resident = sum(process.memory_info().rss for process in tree if process.name().startswith("python"))
    assert resident > 5 * 160 * 2**20  # the control: a sum of resident sizes counts the model five times
    assert tool.outcome.stopped and tool.outcome.ok, tool.outcome.reason
    assert 160 * 2**20 <= tool.outcome.peak_memory_bytes < 512 * 2**20


def test_a_fork_bomb_is_reported_as_processes_not_memory(tmp_path, started, sandboxing, accounting):
    """Each forked Python is ~20 MiB resident but shares nearly all of it: past 16 processes a sum of resident
    sizes would be past the 128 MiB limit; the proportional (or the cgroup's) count is not."""
    if sandboxing.backend == "runsc":
        pytest.skip("gVisor refuses the fork itself: see test_under_gvisor_a_fork_past_the_limit_fails")
    bomb = """\
    def bomb():
        for _ in range(200):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            time.sleep(0.01)
    threading.Timer(0.5, bomb).start()
    """
    limits = replace(QUICK, processes=16, memory_bytes=128 * 2**20)
    with started(tool_command(tmp_path, after=bomb), limits) as tool:
        outcome = tool.wait(30)
    assert outcome is not None and outcome.limit == "processes", outcome and outcome.reason
    assert outcome.peak_memory_bytes < 128 * 2**20


def test_under_gvisor_a_fork_past_the_limit_fails(tmp_path, started, sandboxing):
    """gVisor counts the tool's tasks itself (RLIMIT_NPROC, 16 per allowed process): a fork past them fails."""
    if sandboxing.backend != "runsc":
        pytest.skip("gVisor only")
    many = """    started = []
    try:
        for _ in range(100):
            started.append(subprocess.Popen(["sleep", "300"]))
    except OSError as error:
        print("REPORT", json.dumps({"started": len(started), "error": type(error).__name__}), flush=True)
    for process in started:  # room again for the server's threads
        process.kill()
        process.wait()
    """
    with started(tool_command(tmp_path, before=many), replace(QUICK, processes=2)):
        pass
    seen = reported(tmp_path)
    assert seen["started"] < 32 and seen["error"] == "BlockingIOError"


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_the_log_is_captured_and_capped(tmp_path, started):
    noisy = """\
    print("started on port", os.environ["PORT"], flush=True)
    print("a warning on stderr", file=sys.stderr, flush=True)
    sys.stdout.write("x" * 100_000)
    sys.stdout.flush()
    """
    limits = replace(QUICK, log_bytes=10_000)
    with started(tool_command(tmp_path, before=noisy), limits) as tool:
        pass
    log = (tmp_path / "tool.log").read_bytes()
    assert log.startswith(b"started on port 8080\na warning on stderr\n")
    body, note = log[:10_000], log[10_000:].decode()
    assert body.endswith(b"x" * 100)
    assert tool.outcome.log_bytes_dropped == 100_000 + len("started on port 8080\na warning on stderr\n") - 10_000
    assert note == f"\n[nlpbench: log cut at 10000 bytes; {tool.outcome.log_bytes_dropped} more dropped]\n"
    assert (tmp_path / "tool.log").stat().st_mode & 0o077 == 0


def test_a_tool_that_exits_at_once_is_a_one_line_error(tmp_path, started):
    with pytest.raises(SandboxError) as raised, started("echo 'patient Jane Roe' >&2; exit 3"):
        pass
    assert str(raised.value) == (
        "the tool ended before it answered GET /api/v1/healthCheck: the tool exited with status 3"
    )
    assert (tmp_path / "tool.log").read_text() == "patient Jane Roe\n"


def test_a_tool_that_never_gets_ready_is_a_one_line_error_and_is_killed(tmp_path, sandboxing):
    seconds = str(300 + uuid.uuid4().int % 10**6)  # this test's own sleep: not another test's, nor another suite's
    never = start_tool(
        f"sleep {seconds}", QUICK, tmp_path / "tool.log", sandbox=sandboxing, startup_seconds=1, grace_seconds=1
    )
    with pytest.raises(SandboxError) as raised, never:
        pass
    assert str(raised.value) == "the tool did not answer GET /api/v1/healthCheck within 1 s of starting"
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", seconds] and _alive(p)]


@pytest.mark.parametrize("command", ["kill -SEGV $$", "sh -c 'kill -SEGV $$'; exit $?"])
def test_a_tool_killed_by_a_signal_is_named_by_it_directly_or_through_its_shell(tmp_path, started, command):
    with pytest.raises(SandboxError) as raised, started(command):
        pass
    assert str(raised.value).endswith(": the tool was killed by SIGSEGV")


def test_the_weak_fallback_runs_only_when_asked_for():
    with pytest.raises(SandboxUnavailable, match="allow it for public data explicitly"):
        choose(Sandbox(backend="unshare"))
    assert choose(Sandbox(backend="unshare", weak=True)).name == "unshare"
    with pytest.raises(SandboxUnavailable, match="unknown sandbox 'docker'"):
        choose(Sandbox(backend="docker"))
