"""The sandbox's cgroup: the tool inside from its start, the kernel enforcing memory and processes, nothing left.

Each test's tool writes its own ``/proc/self/cgroup`` into a report file, so
the test knows which cgroup it ran in and checks that it is gone afterwards.
The runner's watch is made to look only once (``POLL_SECONDS`` of a minute):
a limit reported then is the kernel's, read from the cgroup's counters. Skipped
where no cgroup can be made (tried once, as the sandbox does).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from nlpbench.runner import sandbox
from nlpbench.runner.cgroup import Cgroup, make_cgroup
from tests.platform.test_worker import run_worker, shown, submit
from tests.runner.test_sandbox import QUICK, started, tool_command


def _probe() -> Cgroup | None:
    cgroup = make_cgroup(64 * 2**20, 8)
    if cgroup is not None:
        cgroup.remove()
    return cgroup


PROBE = _probe()
pytestmark = pytest.mark.skipif(PROBE is None, reason="no cgroup can be made here (not writable, or no memory/pids)")


def report_cgroup(report: Path) -> str:
    """Python lines writing the process's ``/proc/self/cgroup`` to ``report``."""
    return f"open({str(report)!r}, 'w').write(open('/proc/self/cgroup').read())\n"


def cgroup_directories(report: Path) -> list[Path]:
    """The tool's cgroup directories on this host, one per hierarchy of the probe, from its report."""
    lines = report.read_text().splitlines()
    paths = {controllers: path for _, controllers, path in (line.split(":", 2) for line in lines)}
    found = []
    for controller, directory in PROBE.directories.items():
        wanted = "" if PROBE.version == 2 else controller
        (path,) = [path for controllers, path in paths.items() if wanted in controllers.split(",")]
        assert "/nlpbench/tool-" in path, (controller, path)
        found.append(directory.parent.parent / "nlpbench" / path.rsplit("/", 1)[1])
    return found


@pytest.fixture
def one_look(monkeypatch):
    """The watch looks once, at the start: any limit found later is the kernel's."""
    monkeypatch.setattr(sandbox, "POLL_SECONDS", 60.0)


def test_the_tool_runs_in_a_cgroup_of_its_own_that_is_removed_at_the_end(nb, dataset, tmp_path):
    report = tmp_path / "cgroup.txt"
    command = f"cat /proc/self/cgroup > {report} && exec {sys.executable} -m nlpbench serve -a date --port 8080"
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--command", command)
    run_worker(nb)
    assert shown(nb, submission)["status"] == "SCORED"
    directories = cgroup_directories(report)
    assert directories and not [directory for directory in directories if directory.exists()]


#: A tool that, on the last note, allocates and touches three times its memory limit in one go.
GREEDY = """\
import asyncio, sys
import uvicorn
from nlpbench.api.tool import create_app
from nlpbench.cli.serve import build_annotator

{report}app = create_app(build_annotator("date"))
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
    report, script = tmp_path / "cgroup.txt", tmp_path / "greedy.py"
    script.write_text(GREEDY.format(report=report_cgroup(report), last=dataset[-1], limit=200 * 2**20))
    queue = nb("submissions", "queue", "default", "--tool-memory", "200", "--timeout", "5", "--retries", "1")
    assert queue.exit_code == 0
    submission = submit(nb, "--task", "date", "--dataset", "notes", "--command", f"{sys.executable} {script}")
    run_worker(nb)
    data = shown(nb, submission)
    assert (data["status"], data["reason"]) == ("FAILED", "the tool exceeded its memory limit of 200 MiB")
    assert not [directory for directory in cgroup_directories(report) if directory.exists()]


def test_a_fork_bomb_is_stopped_by_the_kernel_at_the_pids_limit(tmp_path, one_look):
    report = tmp_path / "cgroup.txt"
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
            open("refused.json", "w").write(json.dumps(forked))
        os._exit(3)
    threading.Timer(0.5, bomb).start()
    """
    limits = replace(QUICK, processes=4)
    with started(tmp_path, tool_command(tmp_path, before=report_cgroup(report), after=bomb), limits) as tool:
        outcome = tool.wait(30)
    assert outcome is not None and outcome.limit == "processes" and outcome.returncode == 3
    tasks = sandbox.TASKS_PER_PROCESS * 4
    assert (
        outcome.reason
        == f"the tool tried to start more than 4 processes (the kernel refused a fork or thread past {tasks})"
    )
    assert json.loads((tmp_path / "work" / "refused.json").read_text()) < tasks
    assert not [directory for directory in cgroup_directories(report) if directory.exists()]
