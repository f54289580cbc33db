"""``nlpbench score i2b2``: every output format, the script's printout, selections and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.cli.errors import one_line_error
from tests.conformance.i2b2_cases import GOLD, TEXT, xml


@pytest.fixture
def dirs(tmp_path):
    for side, notes in (
        ("system", {"100-01": GOLD[::2], "100-02": GOLD[3:9]}),
        ("gold", {"100-01": GOLD, "100-02": GOLD[:9]}),
    ):
        (tmp_path / side).mkdir()
        for name, tags in notes.items():
            (tmp_path / side / f"{name}.xml").write_text(xml(TEXT, tags), encoding="utf-8")
    return tmp_path / "system", tmp_path / "gold"


def test_json_report_has_every_evaluation_micro_and_macro(cli, dirs):
    system, gold = dirs
    result = cli("score", "i2b2", "-p", system, "-g", gold, "--profile", "i2b2-2014", "-f", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["task"], report["profile"]) == ("i2b2", "i2b2-2014")
    keys = [(r["metric"], r["label"], r.get("average")) for r in report["scores"]]
    assert len(keys) == 2 * (10 + 8 * 4) and len(set(keys)) == len(keys)
    strict = report["scores"][keys.index(("strict", None, None))]
    assert (strict["documents"], strict["tp"], strict["fp"], strict["fn"]) == (2, 20, 0, 16)
    assert strict["precision"] == 1.0 and strict["recall"] == 0.5556 and strict["f1"] == 0.7143
    macro = report["scores"][keys.index(("strict", None, "macro"))]
    assert (macro["recall"], macro["recall_sd"]) == (0.5926, 0.074)
    assert {r["document"] for r in report["per_document"]} == {"100-01", "100-02"}


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_other_formats(cli, dirs, fmt):
    system, gold = dirs
    result = cli("score", "i2b2", "-p", system, "-g", gold, "-f", fmt)
    assert result.exit_code == 0, result.stderr
    assert "binary_hipaa_strict" in result.stdout and "LOCATION" in result.stdout


def test_official_printout_and_output_file(cli, dirs, tmp_path):
    system, gold = dirs
    result = cli("score", "i2b2", "-p", system, "-g", gold, "--profile", "i2b2-2014", "--official")
    lines = result.stdout.splitlines()
    assert lines[:6] == [
        "Token (2)                Measure        Macro (SD)     Micro (Primary)     ",
        "---------------------------------------------------------------------------",
        "Total                    Precision      1.0 (0.0)      1.0                 ",
        "                         Recall         0.5045 (0.0045)0.5072              ",
        "                         F1             0.6707         0.6731              ",
        "",
    ]  # as evaluate.py prints it on these files, the SD overflowing its column included
    assert result.stdout.count("Micro (Primary)") == 42
    out = tmp_path / "official.txt"
    assert cli("score", "i2b2", "-p", system, "-g", gold, "--official", "-o", out).exit_code == 0
    assert out.read_text(encoding="utf-8").startswith("Token (2)")


def test_filter_invert_conjunctive_reach_the_report(cli, dirs):
    system, gold = dirs
    args = ("score", "i2b2", "-p", system, "-g", gold, "-f", "json", "--filter", "NAME,PATIENT", "--conjunctive")
    report = json.loads(cli(*args).stdout)
    assert report["inputs"]["filter"] == "NAME,PATIENT" and report["inputs"]["conjunctive"] is True
    strict = next(r for r in report["scores"] if r["metric"] == "strict" and r["label"] is None)
    # the patient's name (NAME and PATIENT) is in both gold notes and in neither system note; the doctor's
    # name, found in both, would count with NAME or PATIENT
    assert (strict["tp"], strict["fp"], strict["fn"]) == (0, 0, 2)


def test_malformed_xml_is_one_line_and_exit_2(cli, dirs):
    system, gold = dirs
    (system / "100-01.xml").write_text("<deIdi2b2><TEXT>unclosed", encoding="utf-8")
    message = one_line_error(cli("score", "i2b2", "-p", system, "-g", gold))
    assert message.startswith(f"{system / '100-01.xml'}: malformed XML at line 1")


def test_differing_text_and_bad_offsets_are_one_line_errors_without_the_text(cli, dirs):
    system, gold = dirs
    (system / "100-02.xml").write_text(xml(TEXT.replace("Jane", "June"), []), encoding="utf-8")
    message = one_line_error(cli("score", "i2b2", "-p", system, "-g", gold))
    assert "note text differs" in message and "June" not in message
    (system / "100-02.xml").write_text(xml(TEXT, ['<DATE start="x1" end="4" TYPE="DATE" />']), encoding="utf-8")
    message = one_line_error(cli("score", "i2b2", "-p", system, "-g", gold))
    assert "tag 0 <DATE>: bad offsets start='x1' end='4'" in message


def test_a_readme_in_the_gold_directory_stops_the_script_profile_only(cli, dirs):
    system, gold = dirs
    (gold / "README").write_text("notes", encoding="utf-8")
    assert cli("score", "i2b2", "-p", system, "-g", gold).exit_code == 0
    assert "README: malformed XML" in one_line_error(
        cli("score", "i2b2", "-p", system, "-g", gold, "--profile", "i2b2-2014")
    )


def test_profiles_lists_the_quirks():
    result = subprocess.run(
        [sys.executable, "-m", "nlpbench", "profiles", "i2b2"], capture_output=True, text=True, check=True
    )
    assert "i2b2-2014" in result.stdout and "standard" in result.stdout
    for quirk in ("sets = True", "hipaa_prefix_case_sensitive = True", "only_common_notes = True", "'IDNUM '"):
        assert quirk in result.stdout


def test_the_guide_example_prints_what_the_page_shows(cli, tmp_path, monkeypatch):
    """The i2b2 page's commands, run as written on the example pair, print the lines it shows."""
    from nlpbench.cli.score import example_file
    from tests.conftest import ROOT

    for name in ("gold.json", "pred.json"):
        (tmp_path / name).write_bytes(example_file(name).read_bytes())
    monkeypatch.chdir(tmp_path)
    section = (ROOT / "docs" / "tasks" / "i2b2-2014.md").read_text(encoding="utf-8").splitlines()
    section = section[: section.index("```", section.index("```console") + 1)]
    commands = [i for i, line in enumerate(section) if line.startswith("$ nlpbench ")]
    assert len(commands) == 5
    for at, end in zip(commands, [*commands[1:], len(section)], strict=True):
        result = cli(*section[at].split()[2:])
        assert result.exit_code == 0, result.stderr
        shown = section[at + 1 : end]
        shown = shown[: shown.index("…")] if "…" in shown else shown
        printed = [line.rstrip() for line in (result.stderr + result.stdout).splitlines()]
        if section[at].startswith("$ nlpbench convert"):  # warnings, then the summary line
            assert sorted(printed) == sorted(shown)
        else:
            assert printed[: len(shown)] == shown
