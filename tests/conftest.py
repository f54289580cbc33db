"""Shared fixtures: the public vectors folder, temporary files, the CLI runner."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent

# Property tests check what is computed, not how fast: a busy CI machine must not fail an
# example for taking longer than Hypothesis's default 200 ms deadline, nor for generating slowly.
settings.register_profile("nlpbench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("nlpbench")


def vectors_dir() -> Path | None:
    """``$NLPBENCH_VECTORS``, else ``../shared/vectors`` beside the checkout, if it exists."""
    candidates = [os.environ.get("NLPBENCH_VECTORS"), ROOT.parent / "shared" / "vectors"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Python's cyclic collector no longer walks what collection made, which every test process keeps to its
    end anyway (modules, test functions, parameters: about 230,000 objects): its full collections over them
    were 10 to 15 % of a test process's CPU, and its last one, at the end of the session, could outlast the 5 s
    pytest-xdist waits before it interrupts a process (a KeyboardInterrupt printed as ignored)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def vectors() -> Path:
    found = vectors_dir()
    if found is None:
        pytest.skip("public vectors not found: set NLPBENCH_VECTORS or put shared/vectors beside the checkout")
    return found


@pytest.fixture
def cli():
    """Run ``nlpbench ARGS…`` in-process; returns the click Result (exit_code, stdout, stderr)."""
    from nlpbench.cli import app

    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return run


@pytest.fixture(params=["bwrap", "runsc", "unshare"])
def sandboxing(request):
    """Each sandbox that can run here (the weak fallback allowed explicitly, as an organiser would)."""
    from nlpbench.runner.isolation import Sandbox, SandboxUnavailable, choose

    settings = Sandbox(backend=request.param, weak=request.param == "unshare")
    try:
        choose(settings)
    except SandboxUnavailable as error:
        pytest.skip(str(error))
    return settings


@pytest.fixture
def bubblewrap():
    """Skip, saying why, where bubblewrap cannot run a sandbox here."""
    from nlpbench.runner.isolation import Sandbox, SandboxUnavailable, choose

    try:
        choose(Sandbox(backend="bwrap"))
    except SandboxUnavailable as error:
        pytest.skip(str(error))


@pytest.fixture
def started(tmp_path, sandboxing):
    """``started(command, limits, **options)``: ``start_tool`` in each sandbox, the tool's folder ``tmp_path/tool``."""
    from nlpbench.runner.sandbox import start_tool
    from tests.runner.test_sandbox import QUICK

    def start(command: str, limits=QUICK, **options):
        (tmp_path / "tool").mkdir(exist_ok=True)
        options.setdefault("tool_dir", tmp_path / "tool")
        return start_tool(command, limits, tmp_path / "tool.log", sandbox=sandboxing, startup_seconds=20, **options)

    return start
