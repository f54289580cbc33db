"""Without a sandbox a worker runs no team tool: it ends the submission FAILED saying why, at no quota cost.

Here bubblewrap and gVisor are made to fail (programs of the same names that
refuse, first on ``PATH``). A team's command then ends FAILED with one line
naming what each sandbox said; the weaker ``unshare`` fallback runs it only on
a public dataset of a queue whose organisers allowed it (``--weak-sandbox``),
never on a private one.
"""

from __future__ import annotations

import os
import sys

import pytest

from nlpbench.runner import gvisor, isolation
from tests.platform.conftest import arena  # noqa: F401

COMMAND = f"{sys.executable} -m nlpbench serve -a date --port 8080"


def forget_probes() -> None:
    for probe in (isolation.bubblewrap_works, gvisor.gvisor_works, isolation.unshare_command):
        probe.cache_clear()


@pytest.fixture
def no_sandbox(tmp_path, monkeypatch):
    """bwrap and runsc that refuse, as on a machine without user namespaces or gVisor."""
    fake = tmp_path / "bin"
    fake.mkdir()
    for program in ("bwrap", "runsc"):
        (fake / program).write_text(f"#!/bin/sh\necho '{program}: permission denied' >&2\nexit 1\n")
        (fake / program).chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    forget_probes()
    yield
    forget_probes()


def test_without_a_sandbox_a_team_tool_ends_failed_saying_why(arena, no_sandbox):  # noqa: F811
    arena.queue("--quota", "1")
    submission = arena.submitted(command=COMMAND)
    arena.work()
    data = arena.shown(submission)
    assert data["status"] == "FAILED"
    assert data["reason"] == (
        "the tool did not start: no sandbox can run a tool here "
        "(bwrap: bwrap: permission denied; runsc: runsc: permission denied)"
    )
    assert arena.submit(command=COMMAND).status_code == 201  # it cost no place of the quota of 1


def test_the_weak_fallback_runs_team_tools_on_public_data_only_where_allowed(arena, no_sandbox):  # noqa: F811
    arena.queue("--weak-sandbox")
    public = arena.submitted(command=COMMAND, dataset="open")
    private = arena.submitted(command=COMMAND, dataset="notes")
    arena.work()
    assert arena.shown(public)["status"] == "SCORED", arena.shown(public)["reason"]
    assert arena.shown(private)["status"] == "FAILED"
    assert arena.shown(private)["reason"].startswith("the tool did not start: no sandbox can run a tool here")
