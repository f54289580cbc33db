"""CodiEsp MAP against trectools 0.0.42 itself on random inputs.

trectools is a test dependency only (``pip install trectools==0.0.42``). Each
seed writes a gold and a ranked prediction file with what real runs contain:
codes in mixed case, repeated codes, codes outside the valid list, gold
documents without predictions, predicted documents absent from the gold,
documents ranked in reverse file order, and now and then a ranking longer than
1000 codes. The reference side prepares the qrels and run files as
``codiespD_P_evaluation.py`` does (codes lower-cased; repeats dropped keeping
the first; predictions, not gold, filtered by the valid list; every score 10)
and asks trectools for ``get_map(trec_eval=False)``: the ``codiesp2020`` MAP
must print the same and agree unrounded. ``standard`` MAP (every gold document,
whole ranking) and MAP@k are checked against trectools' per-query AP.

Codes and document ids always contain a letter: trectools reads its files with
pandas type inference, and a column of digits only would become integers that
no longer equal the gold's strings (the official script crashes on such gold
before it gets there).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from nlpbench.tasks.codiesp import score_codiesp

trectools = pytest.importorskip("trectools", reason="trectools 0.0.42 is not installed")

pytestmark = [pytest.mark.reference, pytest.mark.filterwarnings("ignore:The inplace keyword")]

LETTERS = "abcdefghjkmnqrstz"


def random_code(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return f"{rng.choice(LETTERS)}{rng.randint(0, 99):02d}.{rng.randint(0, 9)}"
    return f"{rng.randint(0, 9)}{rng.choice(LETTERS)}{rng.choice(LETTERS)}{rng.randint(0, 9)}"


def mixed_case(rng: random.Random, code: str) -> str:
    return code.upper() if rng.random() < 0.2 else code


def random_case(rng: random.Random, long: bool) -> tuple[str, str, set[str]]:
    pool = sorted({random_code(rng) for _ in range(2000 if long else 60)})
    valid = {code for code in pool if rng.random() < (0.95 if long else 0.75)}
    gold_lines, pred_lines = [], []
    documents = [f"S{rng.randint(1000, 9999)}-{n}" for n in range(rng.randint(1, 8))]
    for doc in documents:
        relevant = rng.sample(pool, rng.randint(1, min(12, len(pool))))
        gold_lines += [f"{doc}\t{mixed_case(rng, code)}\n" for code in relevant for _ in range(rng.choice((1, 1, 2)))]
    predicted = [doc for doc in documents if rng.random() < 0.8] + [f"X{n}-unknown" for n in range(rng.randint(0, 2))]
    for n, doc in enumerate(predicted):
        size = rng.randint(1050, 1400) if long and n == 0 else rng.randint(0, 25)
        ranked = rng.sample(pool, min(size, len(pool)))
        ranked += rng.sample(ranked, min(len(ranked), rng.randint(0, 3)))  # repeats, ranked again further down
        pred_lines += [f"{doc}\t{mixed_case(rng, code)}\n" for code in ranked]
    rng.shuffle(gold_lines)
    return "".join(gold_lines), "".join(pred_lines), valid


def reference_map(gold: str, pred: str, valid: set[str], folder: Path, **options):
    """trectools 0.0.42 on qrels and run files prepared as codiespD_P_evaluation.py prepares them."""
    relevant = dict.fromkeys((doc, code.lower()) for doc, code in (line.split("\t") for line in gold.splitlines()))
    rank: dict[str, int] = {}
    ranked: dict[tuple[str, str], int] = {}
    for doc, code in (line.split("\t") for line in pred.splitlines()):
        rank[doc] = rank.get(doc, 0) + 1  # file order, counted before repeats and invalid codes go
        ranked.setdefault((doc, code.lower()), rank[doc])
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    qrels.write_text("".join(f"{doc} 0 {code} 1\n" for doc, code in relevant))
    run.write_text("".join(f"{doc}\tQ0\t{code}\t{n}\t10.0\txx\n" for (doc, code), n in ranked.items() if code in valid))
    evaluation = trectools.TrecEval(trectools.TrecRun(str(run)), trectools.TrecQrel(str(qrels)))
    return evaluation.get_map(trec_eval=False, **options)


def has_valid_prediction(pred: str, valid: set[str]) -> bool:
    return any(line.split("\t")[1].lower() in valid for line in pred.splitlines())


def write(folder: Path, gold: str, pred: str, valid: set[str]) -> tuple[Path, Path, Path]:
    paths = folder / "gold.tsv", folder / "pred.tsv", folder / "codes.tsv"
    for path, text in zip(paths, (gold, pred, "".join(f"{c.upper()}\tes\ten\n" for c in sorted(valid))), strict=True):
        path.write_text(text)
    return paths


@pytest.mark.parametrize("seed", range(120))
def test_map_equals_trectools(seed, tmp_path):
    rng = random.Random(seed)
    gold, pred, valid = random_case(rng, long=seed % 20 == 0)
    if not has_valid_prediction(pred, valid):
        pred += f"S0-extra\t{sorted(valid)[0]}\n"
    gold_path, pred_path, codes = write(tmp_path, gold, pred, valid)

    expected = reference_map(gold, pred, valid, tmp_path)
    official = score_codiesp(gold_path, pred_path, [codes], track="D", profile="codiesp2020")
    row = official.score("map")
    assert row["value"] == round(expected, 3)
    assert math.isclose(row["sum"] / row["documents"], expected, rel_tol=1e-12, abs_tol=1e-15)
    assert (seed % 20 == 0) == any("ranked below 1000" in warning for warning in official.warnings)

    standard = score_codiesp(gold_path, pred_path, [codes], track="D", k=[5, 20])
    gold_documents = {line.split("\t")[0] for line in gold.splitlines()}
    for metric, depth in (("map", 10**6), ("map@5", 5), ("map@20", 20)):
        per_query = reference_map(gold, pred, valid, tmp_path, depth=depth, per_query=True).iloc[:, 0]
        ap = [0.0 if math.isnan(v) else v for doc, v in per_query.items() if doc in gold_documents]
        assert math.isclose(standard.score(metric)["value"], math.fsum(ap) / len(gold_documents), rel_tol=1e-12)
