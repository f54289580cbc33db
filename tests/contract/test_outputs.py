"""Every task's JSON output, byte for byte, as the code before the task contract printed it.

``outputs/CASE--PROFILE.json`` holds what ``nlpbench score TASK … --profile
PROFILE --format json`` printed for each case of :mod:`tests.contract.cases`
(a run that fails holds its exit status and one-line error instead; an
output over 64 KB, of the public vectors, its length and SHA-256). A
refactoring that changes one byte of a report fails here.
``NLPBENCH_RECORD_OUTPUTS=1`` writes the files again, for a change that
means to change an output.
"""

from __future__ import annotations

import hashlib
import os
from importlib import resources
from pathlib import Path

import pytest

from nlpbench import profiles, tasks
from tests.conftest import vectors_dir
from tests.contract.cases import CASES, COMPARISONS

HERE = Path(__file__).parent
OUTPUTS = HERE / "outputs"
RECORD = os.environ.get("NLPBENCH_RECORD_OUTPUTS") == "1"
#: Outputs longer than this are pinned by their length and digest, not committed whole.
LARGEST = 64 * 1024


def _root(name: str) -> Path:
    if name == "inputs":
        return HERE / "inputs"
    if name == "examples":
        return Path(str(resources.files("nlpbench.data") / "examples"))
    found = vectors_dir()
    if found is None:
        pytest.skip("public vectors not found: set NLPBENCH_VECTORS or put shared/vectors beside the checkout")
    return found


def _runs() -> list[tuple[str, str]]:
    tasks.load_all()
    return [
        (case, profile)
        for case, (task, _, _) in CASES.items()
        for profile in profiles.names(tasks.REGISTRY.get(task).profiles)
    ]


def printed(result) -> str:
    """What a run printed: its JSON report (or, when large, its length and digest), or its exit status and error."""
    if result.exit_code != 0:
        return f"exit {result.exit_code}\n{result.stderr}"
    data = result.stdout.encode("utf-8")
    if len(data) <= LARGEST:
        return result.stdout
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}\n"


@pytest.mark.parametrize(("case", "profile"), _runs())
def test_json_output_is_unchanged(cli, monkeypatch, case, profile):
    task, root, arguments = CASES[case]
    monkeypatch.chdir(_root(root))
    result = cli("score", task, *arguments, "--profile", profile, "--format", "json")
    _pinned(OUTPUTS / f"{case}--{profile}.json", printed(result))


@pytest.mark.parametrize("case", sorted(COMPARISONS))
def test_compare_json_output_is_unchanged(cli, monkeypatch, case):
    root, arguments = COMPARISONS[case]
    monkeypatch.chdir(_root(root))
    result = cli("compare", "--format", "json", *arguments)
    _pinned(OUTPUTS / f"compare-{case}.json", printed(result))


def _pinned(expected: Path, output: str) -> None:
    if RECORD:
        OUTPUTS.mkdir(exist_ok=True)
        expected.write_text(output, encoding="utf-8")
    assert output == expected.read_text(encoding="utf-8")
