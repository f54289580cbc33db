"""``i2b2-2014`` prints what kotfic/i2b2_evaluation_scripts ``evaluate.py phi`` printed, case by case.

``i2b2_official_cases.json`` holds the cases of ``i2b2_cases.py`` with every
block the script printed on them (its ``how`` says how they were made). Each
case runs through ``nlpbench score i2b2 --profile i2b2-2014 --official`` and
must print the same blocks, number for number; its JSON report must hold the
same values. Where the script stopped with a traceback (``error``), nlpbench scores
and warns that it stops there.
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


SCORED = [case for case in RECORDED if "error" not in case]
STOPPED = [case for case in RECORDED if "error" in case]


@pytest.mark.parametrize("case", SCORED, ids=[c["name"] for c in SCORED])
def test_official_printout(cli, case, tmp_path):
    result = _run(cli, case, tmp_path, "--official")
    assert result.exit_code == 0, result.stderr
    assert parse_blocks(result.stdout) == case["blocks"]  # several systems too, in Python 2.7's dict order
    assert "evaluate.py stops here" not in result.stderr


@pytest.mark.parametrize("case", SCORED[::5], ids=[c["name"] for c in SCORED[::5]])
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


@pytest.mark.parametrize("case", STOPPED, ids=[c["name"] for c in STOPPED])
def test_where_the_script_stops_nlpbench_scores_and_says_so(cli, case, tmp_path):
    """evaluate.py died with a traceback (its last line recorded): nlpbench scores the notes and warns, naming
    the file, the tag where there is one, and the exception."""
    result = _run(cli, case, tmp_path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    side = "system" if "system" in case["name"] or "id_not" in case["name"] else "gold"
    exception = case["error"].split(":")[0]
    (warning,) = [w for w in json.loads(result.stdout)["warnings"] if "evaluate.py stops here" in w]
    assert warning.startswith(f"{tmp_path / side / '100-01.xml'}: ")
    assert f"({exception}" in warning
    assert ("tag 3 <" in warning) == ("not_ascii" in case["name"])
