"""``nlpbench compare``: two systems on the same gold, every overall score's difference and a paired test."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.cli.errors import one_line_error
from tests.tasks.timeline_cases import write_files

EXAMPLES = "src/nlpbench/data/examples"


def _compare(cli, *args):
    result = cli("compare", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _overall(report: dict) -> dict[str, dict]:
    return {r["metric"]: r for r in report["scores"] if not any(r.get(k) for k in ("label", "average"))}


def _assert_values_are_the_scores(compared: dict, a: dict, b: dict) -> None:
    """Every compared value of A and B is the value `nlpbench score` reports for it."""
    scores_a, scores_b = _overall(a), _overall(b)
    assert compared["scores"]
    for row in compared["scores"]:
        assert row["a"] == pytest.approx(scores_a[row["metric"]][row["score"]], abs=1e-12), row
        assert row["b"] == pytest.approx(scores_b[row["metric"]][row["score"]], abs=1e-12), row
        assert row["difference"] == pytest.approx(row["a"] - row["b"], abs=1e-12)
        assert 0 < row["p_value"] <= 1


def test_sandbox_every_overall_value_with_its_difference(cli, tmp_path):
    gold, pred = f"{EXAMPLES}/gold.json", f"{EXAMPLES}/pred.json"
    compared = _compare(cli, pred, gold, "-T", "sandbox", "-g", gold, "-f", "json", "--", "-t", "person_name")
    a = json.loads(cli("score", "sandbox", "-g", gold, "-p", pred, "-t", "person_name", "-f", "json").stdout)
    b = json.loads(cli("score", "sandbox", "-g", gold, "-p", gold, "-t", "person_name", "-f", "json").stdout)
    _assert_values_are_the_scores(compared, a, b)
    assert {(r["metric"], r["score"]) for r in compared["scores"]} == {
        (m, s) for m in ("instance_strict", "instance_relax", "token") for s in ("precision", "recall", "f1")
    }
    assert all(r["ci_low"] <= r["difference"] <= r["ci_high"] for r in compared["scores"])


def test_a_system_against_itself(cli):
    gold, pred = f"{EXAMPLES}/gold.json", f"{EXAMPLES}/pred.json"
    for test in ("randomization", "bootstrap"):
        compared = _compare(cli, pred, pred, "-T", "sandbox", "-g", gold, "--test", test, "-f", "json")
        assert all(r["difference"] == 0 and r["p_value"] == 1 for r in compared["scores"])


def test_same_seed_same_output_other_seed_other_p_values(cli):
    gold, pred = f"{EXAMPLES}/gold.json", f"{EXAMPLES}/pred.json"
    args = (pred, gold, "-T", "sandbox", "-g", gold, "--trials", "500", "-f", "json", "-m", "token")
    first = cli("compare", *args, "--seed", "1").stdout
    assert first == cli("compare", *args, "--seed", "1").stdout
    assert first != cli("compare", *args, "--seed", "2", "--test", "bootstrap").stdout


def _timelines(rng: random.Random, patients: int, noise: float) -> tuple[dict, dict]:
    drugs, labels = ("taxol", "carboplatin", "cisplatin", "doxorubicin"), ("contains-1", "begins-on", "ends-on")
    gold, pred = {}, {}
    for i in range(patients):
        tuples = [[rng.choice(drugs), rng.choice(labels), f"2013-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"]
                  for _ in range(rng.randint(0, 5))]  # fmt: skip
        gold[f"p{i}"] = tuples
        kept = [t for t in tuples if rng.random() > noise]
        extra = [[rng.choice(drugs), "contains-1", "2014-01-01"] for _ in range(rng.random() < noise)]
        pred[f"p{i}"] = kept + extra
    return gold, pred


def test_timelines_type_a_type_b_and_official_rows(cli, tmp_path):
    rng = random.Random(3)
    gold, first = _timelines(rng, 40, 0.2)
    _, second = _timelines(random.Random(3), 40, 0.5)
    ids = list(gold)
    files_a = write_files(tmp_path, gold, first, ids)
    (tmp_path / "b.json").write_text(json.dumps(second), encoding="utf-8")
    common = ("--all-ids", files_a.all_ids, "--mode", "strict")
    compared = _compare(cli, files_a.pred, tmp_path / "b.json", "-T", "timelines", "-g", files_a.gold, "-f", "json",
                        "--", *common)  # fmt: skip
    a = json.loads(cli("score", "timelines", "-g", files_a.gold, "-p", files_a.pred, *common, "-f", "json").stdout)
    b = json.loads(
        cli("score", "timelines", "-g", files_a.gold, "-p", tmp_path / "b.json", *common, "-f", "json").stdout
    )
    _assert_values_are_the_scores(compared, a, b)
    assert {"micro", "type_a", "type_b", "official"} <= {r["metric"] for r in compared["scores"]}
    assert all(r["documents"] == 40 for r in compared["scores"])


def test_codiesp_map_and_f1(cli, tmp_path):
    gold = "S1\tn39.0\nS1\tr52\nS2\ta53.9\nS3\tr52\nS4\tn39.0\n"
    paths = {name: tmp_path / f"{name}.tsv" for name in ("gold", "a", "b", "codes")}
    paths["gold"].write_text(gold, encoding="utf-8")
    paths["a"].write_text("S1\tr52\nS1\tn39.0\nS2\ta53.9\nS3\tn39.0\nS4\tn39.0\n", encoding="utf-8")
    paths["b"].write_text("S1\tn39.0\nS2\tr52\nS3\tr52\nS4\ta53.9\n", encoding="utf-8")
    paths["codes"].write_text("N39.0\tx\nR52\tx\nA53.9\tx\n", encoding="utf-8")
    extra = ("--", "--track", "D", "--valid-codes", paths["codes"])
    compared = _compare(cli, paths["a"], paths["b"], "-T", "codiesp", "-g", paths["gold"], "-f", "json", *extra)
    score = ("score", "codiesp", "-g", paths["gold"], "--track", "D", "-c", paths["codes"], "-f", "json", "-p")
    a, b = (json.loads(cli(*score, paths[side]).stdout) for side in "ab")
    _assert_values_are_the_scores(compared, a, b)
    assert ("map", "value") in {(r["metric"], r["score"]) for r in compared["scores"]}


@pytest.mark.vectors
def test_coreference_metrics_and_the_conll_score(cli, vectors):
    omin = vectors / "omin"
    key = omin / "OMIn_dataset/gold_standard/processed/cr.csv"
    a, b = omin / "tool_results/s2e-coref/s2e-coref.csv", omin / "tool_results/asp/asp_t0.csv"
    extra = ("--", "--profile", "e2e", "--key-format", "omin-csv")
    compared = _compare(cli, a, b, "-T", "coref", "-g", key, "-f", "json", "--trials", "2000", *extra)
    score = ("score", "coref", "--key", key, "--profile", "e2e", "--key-format", "omin-csv", "-f", "json")
    _assert_values_are_the_scores(
        compared, json.loads(cli(*score, "--response", a).stdout), json.loads(cli(*score, "--response", b).stdout)
    )
    rows = {(r["metric"], r["score"]): r for r in compared["scores"]}
    assert rows[("conll", "f1")]["a"] == pytest.approx(0.794, abs=5e-4)  # s2e-coref's published CoNLL .79
    assert {("lea", "f1"), ("muc", "recall"), ("ceafe", "precision")} <= set(rows)
    assert compared["warnings"] and all(w.startswith(("A: ", "B: ")) for w in compared["warnings"])


def test_systems_scored_on_different_documents(cli, tmp_path):
    source = json.loads(Path(f"{EXAMPLES}/pred.json").read_text(encoding="utf-8"))
    extra = json.loads(json.dumps(source["patient_bundles"][0]))
    bundle = extra["note_bundles"][0]
    bundle["note"]["identifier"] = bundle["annotation"]["name"] = "note-extra"
    source["patient_bundles"].append(extra)
    more = tmp_path / "more.json"
    more.write_text(json.dumps(source), encoding="utf-8")
    message = one_line_error(
        cli("compare", f"{EXAMPLES}/pred.json", more, "-T", "sandbox", "-g", f"{EXAMPLES}/gold.json")
    )
    assert message == "A and B were scored on different documents: 1 only in B (first: note-extra)"


def test_bad_requests_are_one_line(cli, tmp_path):
    gold, pred = f"{EXAMPLES}/gold.json", f"{EXAMPLES}/pred.json"
    assert "no metric 'tokn' in sandbox scores" in one_line_error(
        cli("compare", pred, gold, "-T", "sandbox", "-g", gold, "-m", "tokn")
    )
    assert "unknown task 'sandbx'" in one_line_error(cli("compare", pred, gold, "-T", "sandbx", "-g", gold))
    assert "No such option: --bogus" in one_line_error(
        cli("compare", pred, gold, "-T", "sandbox", "-g", gold, "--", "--bogus")
    )
    assert "unknown profile" in one_line_error(
        cli("compare", pred, gold, "-T", "sandbox", "-g", gold, "--", "--profile", "x")
    )
    assert one_line_error(cli("compare", pred, tmp_path / "none.json", "-T", "sandbox", "-g", gold)).endswith(
        "none.json: no such file"
    )


@pytest.mark.vectors
@pytest.mark.parametrize("profile", ["standard", "conll2012"])
def test_blanc_from_its_two_parts(cli, vectors, profile):
    cases = vectors / "conll-scorer-testcases"
    key, a, b = cases / "TC-M.key", cases / "TC-M-2.response", cases / "TC-M-4.response"
    compared = _compare(
        cli, a, b, "-T", "coref", "-g", key, "-f", "json", "--trials", "200", "--", "--profile", profile
    )
    score = ("score", "coref", "--key", key, "--profile", profile, "-f", "json", "--response")
    _assert_values_are_the_scores(compared, json.loads(cli(*score, a).stdout), json.loads(cli(*score, b).stdout))
    assert {("blanc", "recall"), ("blanc", "precision"), ("blanc", "f1")} <= {
        (r["metric"], r["score"]) for r in compared["scores"]
    }
