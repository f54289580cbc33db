"""The ``nlpbench`` process ends with its objects frozen out of the exit's garbage collections, status unchanged."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """\
import gc, sys
from nlpbench.cli import main
sys.argv = ['nlpbench', *sys.argv[1:]]
try:
    main()
except SystemExit as stop:
    print('frozen', gc.get_freeze_count() > 0, file=sys.stderr)
    raise
"""


@pytest.mark.parametrize(
    ("argv", "status", "said"),
    [
        (["--version"], 0, "nlpbench "),
        (["score", "codiesp", "--track", "X", "--gold", "no-such.tsv", "--pred", "no.tsv", "-c", "no.tsv"], 2,
         "nlpbench: error: "),
    ],
)  # fmt: skip
def test_objects_are_frozen_at_the_end_and_the_status_is_the_commands(argv, status, said):
    done = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, check=False)
    assert done.returncode == status
    assert said in done.stdout + done.stderr
    assert "frozen True" in done.stderr
