"""``nlpbench demo`` end to end on a few notes: real tool processes on localhost, a leaderboard, a report."""

import json
import re

from nlpbench.tasks.sandbox import score_sandbox


def test_demo_serves_annotates_scores_and_reports(cli, tmp_path):
    result = cli("demo", "--notes", "12", "--tools", "phi", "--out", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "token F1 (standard)" in result.stdout and "instance_strict F1 (standard)" in result.stdout
    assert (
        "dataset: 12 notes of nlpbench's embedded synthetic set" in result.stderr
        and "phi at http://127.0.0.1:" in result.stderr
    )
    row = next(line for line in result.stdout.splitlines() if line.strip().startswith("phi"))
    printed_micro = float(row.split()[-1])
    # the leaderboard's numbers are those score sandbox gives for the files the demo wrote
    counts = [0, 0, 0]
    for label in ("date", "person_name", "location", "id", "contact"):
        strict = score_sandbox(tmp_path / "gold.json", tmp_path / "phi.json", label).score("token")
        counts = [counts[0] + strict["tp"], counts[1] + strict["fp"], counts[2] + strict["fn"]]
    assert abs(printed_micro - 2 * counts[0] / (2 * counts[0] + counts[1] + counts[2])) < 1e-4
    page = (tmp_path / "report.html").read_text()
    assert 'id="phi-person_name"' in page and 'href="#phi-person_name"' in page
    assert re.search(r'<mark class="F[NP]">', page)
    assert len(json.loads((tmp_path / "notes.json").read_text())["patient_bundles"]) == 12


def test_unknown_tool_is_one_line(cli, tmp_path):
    result = cli("demo", "--tools", "phi,nonesuch", "--out", tmp_path)
    assert result.exit_code == 2
    assert result.stderr.startswith("nlpbench: error: unknown annotator 'nonesuch'; known:")


def test_run_benchmarks_a_running_tool_on_any_dataset(cli, tmp_path):
    from nlpbench.runner.services import local_tools

    assert cli("synth", "--notes", "8", "--seed", "3", tmp_path / "notes.json").exit_code == 0
    with local_tools(["phi"], tmp_path / "logs") as urls:
        result = cli(
            "run", "--notes", tmp_path / "notes.json", "--tool", f"baseline={urls['phi']}", "--out", tmp_path / "o"
        )
    assert result.exit_code == 0, result.stderr
    assert any(line.strip().startswith("baseline") for line in result.stdout.splitlines())
    assert "8 notes of" in (tmp_path / "o" / "report.html").read_text()
    assert (tmp_path / "o" / "baseline.json").is_file()


def test_run_refuses_a_tool_without_a_url(cli, tmp_path):
    result = cli("run", "--notes", tmp_path / "x.json", "--tool", "phi")
    assert result.exit_code == 2 and "give NAME=URL" in result.stderr


def test_adapter_without_its_extra_names_the_extra(cli, tmp_path, monkeypatch):
    from nlpbench.annotators import REGISTRY, load_all

    load_all()
    monkeypatch.delitem(REGISTRY._items, "philter", raising=False)  # as on an install without the extra
    result = cli("demo", "--tools", "philter", "--out", tmp_path)
    assert result.exit_code == 2
    assert result.stderr == "nlpbench: error: annotator 'philter' needs its package: pip install 'nlpbench[philter]'\n"
