"""``nlpbench demo`` end to end on a few notes: real tool processes on localhost, a leaderboard, a report."""

import json
import re

from nlpbench.tasks.sandbox import score_sandbox


def test_demo_serves_annotates_scores_and_reports(cli, tmp_path):
    result = cli("demo", "--notes", "12", "--tools", "phi", "--out", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "token F1 (standard)" in result.stdout and "instance_strict F1 (standard)" in result.stdout
    assert "dataset: 12 synthetic notes" in result.stderr and "phi at http://127.0.0.1:" in result.stderr
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
