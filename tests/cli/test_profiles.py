"""``nlpbench profiles [TASK]`` in a fresh interpreter, so that no earlier test has loaded the tasks for it."""

import subprocess
import sys

import pytest

from nlpbench import tasks

TASKS = tasks.load_all()


def nlpbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nlpbench", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("task", TASKS)
def test_profiles_of_one_task(task):
    result = nlpbench("profiles", task)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{task}:\n  ")
    assert "  standard " in result.stdout
    assert all(not line.endswith(":") or line == f"{task}:" for line in result.stdout.splitlines() if line[:1] != " ")


def test_every_task_without_an_argument_and_an_unknown_one():
    listing = nlpbench("profiles")
    assert [line[:-1] for line in listing.stdout.splitlines() if not line.startswith(" ")] == TASKS
    unknown = nlpbench("profiles", "nonesuch")
    assert unknown.returncode == 2
    assert unknown.stderr == f"nlpbench: error: unknown task 'nonesuch'; known: {', '.join(TASKS)}\n"
