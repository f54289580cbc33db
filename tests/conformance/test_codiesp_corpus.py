"""CodiEsp on public data: the official toy examples, the test split against itself, synthetic runs.

- Toy data of TeMU-BSC/codiesp-evaluation-script: its README prints MAP 0.444
  and P|R|F1 0.444|0.4|0.421 for track D, and P 0.636, R 0.538, F1 0.583 for X.
  The valid codes are the codes of the toy files except the placeholders the
  toy predictions use as invalid codes (``CODE3`` …) and, for X, ``s43.40``,
  which the official lists lack (the README's S1889 precision 0.7 = 7/10
  requires it).
- The test split scored against itself: 1.0 everywhere under ``standard``;
  under ``codiesp2020`` too, except for the 16 X codes whose references the
  official spanning rule turns inside out.
- Synthetic predictions built from the test gold by fixed rules (dropped,
  reversed, shortened and upper-cased documents, an invalid code first, a code
  of the next document, a document absent from the gold; X spans exact,
  widened by 10, or moved 11 / 1 / 5+3 characters), with a valid-code list of
  every code in the CodiEsp gold files: the official scripts printed the
  values of ``SYNTHETIC`` (the unrounded ones come from an independent
  re-implementation that agreed with them to 3 decimals).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nlpbench.formats import codiesp as tsv
from nlpbench.metrics.coding import code_kind
from nlpbench.tasks.codiesp import score_codiesp

pytestmark = pytest.mark.vectors

SYNTHETIC = {
    "D": {"map": (0.914, 0.9135858762415847), "micro": ((0.972, 0.868, 0.917),
                                                        (0.972397476340694, 0.8676988036593948, 0.917069542580885))},
    "P": {"map": (0.893, 0.8927528835564947), "micro": ((0.925, 0.853, 0.888),
                                                        (0.9247842170160296, 0.8532423208191127, 0.8875739644970414))},
    "X": {"micro": ((0.648, 0.559, 0.6), (0.6477732793522267, 0.5589895189465197, 0.6001154068090017))},
}  # fmt: skip


@pytest.fixture(scope="module")
def codiesp(vectors) -> Path:
    return vectors / "codiesp"


def micro(report) -> tuple:
    row = report.score("micro")
    return row["precision"], row["recall"], row["f1"]


def write_codes(path: Path, codes) -> Path:
    path.write_text("".join(f"{code.upper()}\tdesc-es\tdesc-en\n" for code in sorted(codes)), encoding="utf-8")
    return path


def toy_codes(codiesp: Path, track: str, leave_out: set[str]) -> set[str]:
    column = {"D": (1, 1), "X": (2, 3)}[track]
    codes = set()
    for side, index in zip(("gold", "system"), column, strict=True):
        name = "gs" if side == "gold" else "pred"
        for line in (codiesp / "eval-repo" / side / "toy_data" / f"{name}_{track}.tsv").read_text().splitlines():
            codes.add(line.split("\t")[index].lower())
    return {c for c in codes if not re.fullmatch(r"code\d+", c)} - leave_out  # CODE3 …: the toy's invalid codes


def test_toy_d_reproduces_the_readme(codiesp, tmp_path):
    codes = write_codes(tmp_path / "codes.tsv", toy_codes(codiesp, "D", set()))
    toy = codiesp / "eval-repo"
    report = score_codiesp(toy / "gold/toy_data/gs_D.tsv", toy / "system/toy_data/pred_D.tsv", [codes],
                           track="D", profile="codiesp2020")  # fmt: skip
    assert report.score("map")["value"] == 0.444
    assert report.score("map")["documents"] == 2  # S0210 has no prediction: left out, not 0 (0.296)
    assert micro(report) == (0.444, 0.4, 0.421)
    precision = {row["document"][:5]: row["precision"] for row in report.per_document if row["metric"] == "micro"}
    assert precision == {"S0004": 0.4, "S0210": None, "S1130": 0.5}


def test_toy_x_reproduces_the_readme(codiesp, tmp_path):
    codes = write_codes(tmp_path / "codes.tsv", toy_codes(codiesp, "X", {"s43.40"}))
    toy = codiesp / "eval-repo"
    report = score_codiesp(toy / "gold/toy_data/gs_X.tsv", toy / "system/toy_data/pred_X.tsv", [codes],
                           track="X", profile="codiesp2020")  # fmt: skip
    assert micro(report) == (0.636, 0.538, 0.583)
    rows = {row["document"][:5]: row for row in report.per_document}
    assert (rows["S1889"]["precision"], rows["S1889"]["recall"], rows["S1889"]["f1"]) == (0.7, 0.636, 0.667)
    assert (rows["S0000"]["precision"], rows["S0000"]["recall"], rows["S0000"]["f1"]) == (None, None, None)


@pytest.mark.parametrize("track", ["D", "P"])
@pytest.mark.parametrize("profile", ["standard", "codiesp2020"])
def test_test_split_against_itself_ranked(codiesp, tmp_path, track, profile):
    gold = codiesp / "corpus" / "test" / f"test{track}.tsv"
    codes = write_codes(tmp_path / "codes.tsv", {c for d in tsv.read_ranked_codes(gold) for c in d.codes})
    report = score_codiesp(gold, gold, [codes], track=track, profile=profile)
    documents = len(tsv.read_ranked_codes(gold))  # 250 with diagnoses, 224 with procedures
    assert report.score("map")["value"] == 1.0 and report.score("map")["documents"] == documents
    assert micro(report) == (1.0, 1.0, 1.0)
    if profile == "standard":
        assert report.score("category_micro")["f1"] == 1.0
        sizes = [len(set(d.codes)) for d in tsv.read_ranked_codes(gold)]
        for k in (10, 30):  # a perfect ranking of n codes finds min(n, k) in its top k
            assert report.score(f"precision@{k}")["value"] == pytest.approx(
                sum(min(n, k) / k for n in sizes) / documents
            )
            assert report.score(f"recall@{k}")["value"] == pytest.approx(sum(min(n, k) / n for n in sizes) / documents)


def test_test_split_against_itself_x(codiesp, tmp_path):
    gold = codiesp / "corpus" / "test" / "testX.tsv"
    references = tsv.read_references(gold)
    codes = write_codes(tmp_path / "codes.tsv", {r.code for r in references})
    pred = tmp_path / "pred.tsv"
    tsv.write_predicted_references(references, pred)  # one prediction per reference, spanning its pieces
    standard = score_codiesp(gold, pred, [codes], track="X")
    assert micro(standard) == (1.0, 1.0, 1.0) and standard.score("micro")["tp"] == 3721
    assert standard.score("category_micro")["f1"] == 1.0
    # The official script spans a reference from its first listed start to its last listed end: 16 codes have
    # only references listed out of text order, which no well-formed prediction can contain.
    official = score_codiesp(gold, pred, [codes], track="X", profile="codiesp2020")
    assert official.score("micro")["tp"] == 3721 - 16
    assert micro(official) == (0.996, 0.996, 0.996)
    assert any("16 codes cannot be found" in w for w in official.warnings)
    # Predictions written the official way (possibly inverted) score 1.0 under codiesp2020.
    listed = tmp_path / "listed.tsv"
    listed.write_text("".join(f"{r.doc_id}\t{r.listed_bounds[0]} {r.listed_bounds[1]}\t{r.label}\t{r.code}\n"
                              for r in references), encoding="utf-8")  # fmt: skip
    assert micro(score_codiesp(gold, listed, [codes], track="X", profile="codiesp2020")) == (1.0, 1.0, 1.0)


# --- synthetic runs -------------------------------------------------------------------------------------------


def standin_codes(codiesp: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Every code of the CodiEsp gold files and the sample gold, plus z87.4, minus s43.40, split into D and P."""
    files = [*(codiesp / "corpus").glob("*/*.tsv"), *(codiesp / "eval-repo/gold").glob("codiesp-*/*/*")]
    # z87.4 is in the official D list (README toy: S0004 precision 2/5); s43.40, a train gold code, is in neither
    codes = (set().union(*map(tsv.read_assigned_codes, files)) | {"z87.4"}) - {"s43.40"}
    paths = tmp_path / "d.tsv", tmp_path / "p.tsv"
    for path, kind in zip(paths, "DP", strict=True):
        tsv.write_valid_codes(sorted(c.upper() for c in codes if code_kind(c) == kind), path)
    return paths


def synthetic_ranked(gold: Path) -> str:
    codes: dict[str, list[str]] = {}
    for line in gold.read_text(encoding="utf-8").splitlines():
        case, code = line.split("\t")
        if code not in codes.setdefault(case, []):
            codes[case].append(code)
    documents = sorted(codes)
    lines = []
    for i, case in enumerate(documents):
        ranked = list(codes[case])
        if i % 10 == 9:
            continue
        if i % 3 == 0:
            ranked.reverse()
        if i % 4 == 0 and len(ranked) > 1:
            ranked.pop()
        if i % 3 == 1:
            ranked = ["XXX.9", ranked[0], codes[documents[(i + 1) % len(documents)]][0], *ranked[1:]]
        if i % 5 == 2:
            ranked = [c.upper() for c in ranked] + ranked[:1]
        lines += [f"{case}\t{code}\n" for code in ranked]
    lines.append(f"NOT-IN-GOLD-1\t{codes[documents[0]][0]}\n")
    return "".join(lines)


def synthetic_references(gold: Path) -> str:
    moves = {0: (0, 0), 1: (-10, 10), 2: (-11, 0), 3: (1, 0), 4: (-5, 3)}
    lines = []
    for i, reference in enumerate(tsv.read_references(gold)):
        if i % 6 not in moves:
            continue
        (start, end), (before, after) = reference.listed_bounds, moves[i % 6]
        start = max(0, start + before) if i % 6 == 4 else start + before  # only the 5+3 move stops at 0
        lines.append(f"{reference.doc_id}\t{start} {end + after}\t{reference.label}\t{reference.code}\n")
    return "".join(lines)


@pytest.mark.parametrize("track", ["D", "P", "X"])
def test_synthetic_test_runs_match_the_official_scripts(codiesp, tmp_path, track):
    gold = codiesp / "corpus" / "test" / f"test{track}.tsv"
    pred = tmp_path / "pred.tsv"
    pred.write_text(synthetic_references(gold) if track == "X" else synthetic_ranked(gold), encoding="utf-8")
    d_codes, p_codes = standin_codes(codiesp, tmp_path)
    lists = {"D": [d_codes], "P": [p_codes], "X": [d_codes, p_codes]}[track]
    official = score_codiesp(gold, pred, lists, track=track, profile="codiesp2020")
    printed, exact = SYNTHETIC[track]["micro"]
    assert micro(official) == printed
    row = official.score("micro")
    assert (row["tp"] / (row["tp"] + row["fp"]), row["tp"] / (row["tp"] + row["fn"])) == pytest.approx(exact[:2])
    if track != "X":
        printed_map, exact_map = SYNTHETIC[track]["map"]
        assert official.score("map")["value"] == printed_map
        assert official.score("map")["sum"] / official.score("map")["documents"] == pytest.approx(exact_map, abs=1e-12)
        # every 10th gold document has no prediction: the official denominator is the others plus NOT-IN-GOLD-1
        # (AP 0); standard divides the same sum by every gold document, those without predictions scoring 0
        documents = len(tsv.read_ranked_codes(gold))
        assert official.score("map")["documents"] == documents - documents // 10 + 1
        standard = score_codiesp(gold, pred, lists, track=track)
        assert standard.score("map")["documents"] == documents
        assert standard.score("map")["sum"] == pytest.approx(official.score("map")["sum"], abs=1e-12)
    json.dumps(official.as_dict(), allow_nan=False)
