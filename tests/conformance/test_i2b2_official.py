"""``i2b2-2014`` prints what kotfic/i2b2_evaluation_scripts ``evaluate.py phi`` printed, case by case.

``i2b2_official_cases.json`` holds the cases of ``i2b2_cases.py`` with every
block the script printed on them (its ``how`` says how they were made). Each
case runs through ``nlpbench score i2b2 --profile i2b2-2014 --official`` and
must print the same blocks, number for number; its JSON report must hold the
same values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlpbench.tasks.i2b2 import script_title
from tests.conformance.i2b2_cases import VECTORS, cases, parse_blocks, write_case

RECORDED = json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]


def test_the_vectors_are_the_generated_cases():
    """The committed inputs are what the generator makes today, so re-recording reproduces them."""
    assert [{k: c[k] for k in ("name", "args", "files")} for c in RECORDED] == cases()
    assert len(RECORDED) >= 30


def _run(cli, case: dict, tmp_path: Path, *extra: str):
    write_case(case, tmp_path)
    return cli(
        "score",
        "i2b2",
        "-p",
        tmp_path / "system",
        "-g",
        tmp_path / "gold",
        "--profile",
        "i2b2-2014",
        *case["args"],
        *extra,
    )


@pytest.mark.parametrize("case", RECORDED, ids=[c["name"] for c in RECORDED])
def test_official_printout(cli, case, tmp_path):
    result = _run(cli, case, tmp_path, "--official")
    assert result.exit_code == 0, result.stderr
    printed = parse_blocks(result.stdout)
    assert sorted(printed) == sorted(case["blocks"])
    if len(printed) == 42:  # one system; with several, the script prints them in Python 2's dict order
        assert printed == case["blocks"]


@pytest.mark.parametrize("case", RECORDED[::5], ids=[c["name"] for c in RECORDED[::5]])
def test_json_values_are_the_printed_ones(cli, case, tmp_path):
    report = json.loads(_run(cli, case, tmp_path, "--format", "json").stdout)
    expected = {block[0]: block for block in case["blocks"]}
    rows = report["scores"]
    for micro, macro in zip(rows[::2], rows[1::2], strict=True):
        title = script_title(micro["metric"], micro["label"])
        title = f"{micro['system']} {title}" if "system" in micro else title
        block = expected[title]
        values = [macro["precision"], macro["precision_sd"], macro["recall"], macro["recall_sd"], macro["f1"]]
        values += [micro["precision"], micro["recall"], micro["f1"]]
        assert [None if v == "nan" else float(v) for v in block[2:]] == values
        assert micro["documents"] == int(block[1])
