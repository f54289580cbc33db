"""The sandbox's cgroup: the tool inside from its start, the kernel enforcing memory and processes, nothing left.

Each test looks at the tool's cgroup from the host (the tool's own
``/proc/self/cgroup`` names it relative to a cgroup namespace of its own) and
checks that it is gone afterwards. The runner's watch is made to look only once (``POLL_SECONDS`` of a minute):
a limit reported then is the kernel's, read from the cgroup's counters. Skipped
where no cgroup can be made (tried once, as the sandbox does).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from nlpbench.runner import sandbox
from nlpbench.runner.cgroup import Cgroup, make_cgroup
from tests.platform.test_worker import run_worker, shown, submit, tool_folder
from tests.runner.test_sandbox import QUICK, reported, tool_command


def _probe() -> Cgroup | None:
    cgroup = make_cgroup(64 * 2**20, 8, sandbox.owner())
    if cgroup is not None:
        cgroup.remove()
    return cgroup


PROBE = _probe()
pytestmark = pytest.mark.skipif(PROBE is None, reason="no cgroup can be made here (not writable, or no memory/pids)")


def leftovers() -> list[Path]:
    """The tool cgroups this process made that still exist (every one should be removed when its tool ends)."""
    parents = {directory.parent for directory in PROBE.directories.values()}
    return [found for parent in parents for found in parent.glob(f"tool-{sandbox.owner()}-*")]


@pytest.fixture
def one_look(monkeypatch):
    """The watch looks once, at the start: any limit found later is the kernel's."""
    monkeypatch.setattr(sandbox, "POLL_SECONDS", 60.0)


def test_the_tool_runs_in_a_cgroup_of_its_own_that_is_removed_at_the_end(tmp_path, started):
    with started(tool_command(tmp_path)) as tool:
        inside = tool.cgroup.pids()
        everything = [tool.pid, *(child.pid for child in psutil.Process(tool.pid).children(recursive=True))]
        directories = list(tool.cgroup.directories.values())
    assert set(everything) <= inside  # the sandbox and all it started, from the first instruction
    assert directories and not [directory for directory in directories if directory.exists()]
    assert not leftovers()


def test_a_worker_removes_the_cgroup_of_each_tool_it_ran(nb, dataset, tmp_path):
    command = f"{sys.executable} -m nlpbench serve -a date --port 8080"
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--command", command)
    run_worker(nb)
    assert shown(nb, submission)["status"] == "SCORED"
    assert not leftovers()


#: A tool that, on the last note, allocates and touches three times its memory limit in one go.
GREEDY = """\
import asyncio, sys
import uvicorn
from nlpbench.api.tool import create_app
from nlpbench.cli.serve import build_annotator

app = create_app(build_annotator("date"))
hoard = []


async def greedy(scope, receive, send):
    if scope["type"] == "http" and scope["path"].startswith("/api/v1/text"):
        message = await receive()
        if b"{last}" in message.get("body", b""):
            hoard.append(b"x" * 3 * {limit})

        async def replay():
            return message

        return await app(scope, replay, send)
    await app(scope, receive, send)


uvicorn.run(greedy, host="127.0.0.1", port=8080, log_level="warning")
"""


def test_memory_past_the_limit_at_once_is_stopped_by_the_kernel_and_fails_the_submission(
    nb, dataset, tmp_path, one_look
):
    script = tool_folder(tmp_path) / "greedy.py"
    script.write_text(GREEDY.format(last=dataset[-1], limit=200 * 2**20))
    queue = nb("submissions", "queue", "default", "--tool-memory", "200", "--timeout", "5", "--retries", "1")
    assert queue.exit_code == 0
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--command", f"{sys.executable} {script}")
    run_worker(nb, "--runtime", str(script.parent))
    data = shown(nb, submission)
    assert (data["status"], data["reason"]) == ("FAILED", "the tool exceeded its memory limit of 200 MiB")
    assert not leftovers()


def test_a_fork_bomb_is_stopped_by_the_kernel_at_the_pids_limit(tmp_path, started, sandboxing, one_look):
    if sandboxing.backend == "runsc":
        pytest.skip("gVisor refuses the forks itself (tests/runner/test_sandbox.py)")
    bomb = """\
    def bomb():
        forked = 0
        try:
            for _ in range(400):
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                forked += 1
        except BlockingIOError:
            print("REPORT", json.dumps(forked), flush=True)
        os._exit(3)
    threading.Timer(0.5, bomb).start()
    """
    limits = replace(QUICK, processes=4)
    with started(tool_command(tmp_path, after=bomb), limits) as tool:
        outcome = tool.wait(30)
    assert outcome is not None and outcome.limit == "processes" and outcome.returncode == 3
    tasks = sandbox.TASKS_PER_PROCESS * 4
    assert (
        outcome.reason
        == f"the tool tried to start more than 4 processes (the kernel refused a fork or thread past {tasks})"
    )
    assert reported(tmp_path) < tasks
    assert not leftovers()
