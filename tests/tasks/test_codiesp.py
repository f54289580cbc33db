import gc
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench import profiles
from nlpbench.errors import InputError
from nlpbench.formats import codiesp as tsv
from nlpbench.tasks.codiesp import score_codiesp

CODES = ["a01.0", "b02.1", "c03.2", "c03.9", "d04.3", "0dt70zz", "0dt7", "bw40zzz"]


def files(folder: Path, gold: str, pred: str, codes=CODES) -> tuple[Path, Path, list[Path]]:
    paths = folder / "gold.tsv", folder / "pred.tsv", folder / "codes.tsv"
    for path, text in zip(paths, (gold, pred, "".join(f"{c.upper()}\tdesc\n" for c in codes)), strict=True):
        path.write_text(text, encoding="utf-8")
    return paths[0], paths[1], [paths[2]]


def score(folder, gold, pred, track="D", profile="standard", codes=CODES, **options):
    gold_path, pred_path, lists = files(folder, gold, pred, codes)
    return score_codiesp(gold_path, pred_path, lists, track=track, profile=profile, **options)


def lines(pairs):
    return "".join(f"{doc}\t{code}\n" for doc, code in pairs)


def x_lines(rows, gold=True):
    if gold:
        return "".join(f"{d}\tDIAGNOSTICO\t{c}\tref\t{s} {e}\n" for d, c, s, e in rows)
    return "".join(f"{d}\t{s} {e}\tDIAGNOSTICO\t{c}\n" for d, c, s, e in rows)


documents = st.sampled_from(["d1", "d2", "d3", "d4"])
codes = st.sampled_from([*CODES, "A01.0", "zzz.9"])
pairs = st.lists(st.tuples(documents, codes), min_size=1, max_size=30)


def with_valid(pred_pairs):
    return [*pred_pairs, ("d1", "a01.0")]


@settings(max_examples=60, deadline=None)
@given(pairs, pairs, st.sampled_from(["standard", "codiesp2020"]))
def test_per_document_rows_add_up_to_the_corpus_rows(gold, pred, profile):
    with tempfile.TemporaryDirectory() as folder:
        report = score(Path(folder), lines(gold), lines(with_valid(pred)), profile=profile)
    for metric in ("micro", "category_micro") if profile == "standard" else ("micro",):
        rows = [row for row in report.per_document if row["metric"] == metric]
        total = report.score(metric)
        for count in ("tp", "fp", "fn"):
            assert sum(row[count] for row in rows) == total[count]
    ap = [row["value"] for row in report.per_document if row["metric"] == "map" and row["value"] is not None]
    assert report.score("map")["documents"] == len(ap)
    assert report.score("map")["sum"] == pytest.approx(sum(ap))
    assert json.loads(json.dumps(report.as_dict(), allow_nan=False)) == report.as_dict()


@settings(max_examples=40, deadline=None)
@given(pairs, st.sampled_from(["standard", "codiesp2020"]), st.sampled_from(["D", "P"]))
def test_gold_scored_against_itself_is_perfect(gold, profile, track):
    gold = [(doc, code) for doc, code in gold if code != "zzz.9"] or [("d1", "a01.0")]
    with tempfile.TemporaryDirectory() as folder:
        report = score(Path(folder), lines(gold), lines(gold), track=track, profile=profile)
    assert report.score("map")["value"] == 1.0
    micro = report.score("micro")
    assert (micro["precision"], micro["recall"], micro["f1"], micro["fp"], micro["fn"]) == (1.0, 1.0, 1.0, 0, 0)


@settings(max_examples=40, deadline=None)
@given(pairs, pairs)
def test_standard_does_not_score_documents_absent_from_the_gold(gold, pred):
    with tempfile.TemporaryDirectory() as folder:
        base = score(Path(folder), lines(gold), lines(with_valid(pred)))
        extra = score(Path(folder), lines(gold), lines([*with_valid(pred), ("unknown", "b02.1")]))
    if "unknown" not in {doc for doc, _ in gold}:
        assert base.scores == extra.scores
        assert any("not in the gold, not scored: " in w and "unknown" in w for w in extra.warnings)


def test_the_two_profiles_differ_where_the_official_scripts_do(tmp_path):
    gold = lines([("d1", "a01.0"), ("d1", "b02.1"), ("d2", "c03.2")])
    pred = lines([("d1", "b02.1"), ("d1", "a01.0"), ("d9", "d04.3")])
    official = score(tmp_path, gold, pred, profile="codiesp2020")
    standard = score(tmp_path, gold, pred)
    # AP(d1) = (1/1 + 2/2) / 2 = 1; official: d2 (no prediction) left out, d9 (not in gold) counts 0
    assert official.score("map") == {"metric": "map", "documents": 2, "sum": 1.0, "value": 0.5}
    assert standard.score("map") == {"metric": "map", "documents": 2, "sum": 1.0, "value": 0.5}
    assert [row["document"] for row in standard.per_document if row["metric"] == "map"] == ["d1", "d2"]
    assert official.score("micro")["fp"] == 1 and standard.score("micro")["fp"] == 0
    rows = {row["document"]: row for row in official.per_document if row["metric"] == "micro"}
    assert (rows["d2"]["precision"], rows["d2"]["recall"], rows["d2"]["f1"]) == (None, 0.0, None)
    assert (rows["d9"]["precision"], rows["d9"]["recall"], rows["d9"]["f1"]) == (None, None, None)
    assert {row["document"]: row["value"] for row in official.per_document if row["metric"] == "map"} == {
        "d1": 1.0, "d2": None, "d9": 0.0}  # fmt: skip


def test_valid_codes_repeats_and_case(tmp_path):
    gold = lines([("d1", "A01.0"), ("d1", "a01.0"), ("d1", "c03.2")])
    pred = lines([("d1", "XXX"), ("d1", "B02.1"), ("d1", "b02.1"), ("d1", "a01.0")])
    report = score(tmp_path, gold, pred, profile="codiesp2020")
    assert report.score("map")["value"] == 0.25  # a01.0 at rank 2 once XXX and the repeat are gone
    assert report.per_document[0] == {"document": "d1", "metric": "map", "relevant": 2, "ranked": 2, "value": 0.25}
    assert report.warnings[:2] == [
        "1 predicted codes are in no valid-code list and were removed before ranking: xxx",
        "1 repeated predicted codes were dropped; each code keeps its first rank",
    ]


def test_extras_categories_and_cutoffs(tmp_path):
    gold = lines([("d1", "c03.2"), ("d1", "0dt70zz"), ("d1", "a01.0")])
    pred = lines([("d1", "c03.9"), ("d1", "a01.0"), ("d1", "0dt7")])
    report = score(tmp_path, gold, pred, k=[1, 2])
    names = [row["metric"] for row in report.scores]
    assert names == ["map", "map@1", "map@2", "precision@1", "precision@2", "recall@1", "recall@2", "micro",
                     "category_micro"]  # fmt: skip
    assert report.score("precision@2")["value"] == 0.5 and report.score("recall@2")["value"] == pytest.approx(1 / 3)
    assert report.score("map@1")["value"] == 0.0 and report.score("map@2")["value"] == pytest.approx(0.5 / 3)
    category = report.score("category_micro")  # track D: c03, 0dt (first 3 characters of any code), a01
    assert (category["tp"], category["fp"], category["fn"]) == (3, 0, 0)
    assert report.inputs["k"] == [1, 2]
    assert "k" not in score(tmp_path, gold, pred, profile="codiesp2020").inputs
    assert [row["metric"] for row in score(tmp_path, gold, pred, profile="codiesp2020").scores] == ["map", "micro"]
    gold, pred = lines([("d1", "0dt70zz")]), lines([("d1", "0dt60zz")])
    codes = ["0dt70zz", "0dt60zz"]
    assert score(tmp_path, gold, pred, codes=codes).score("category_micro")["tp"] == 1  # D: 0dt
    assert score(tmp_path, gold, pred, codes=codes, track="P").score("category_micro")["tp"] == 0  # P: 0dt7, 0dt6


def test_depth_1000_only_under_codiesp2020(tmp_path):
    fillers = [f"q{n:04d}" for n in range(1000)]
    gold = lines([("d1", "a01.0")])
    pred = lines([("d1", code) for code in fillers] + [("d1", "a01.0")])
    official = score(tmp_path, gold, pred, profile="codiesp2020", codes=[*fillers, "a01.0"])
    standard = score(tmp_path, gold, pred, codes=[*fillers, "a01.0"])
    assert official.score("map")["value"] == 0.0 and official.score("micro")["tp"] == 1
    assert standard.score("map")["value"] == 1 / 1001
    assert "1 valid predicted codes ranked below 1000 add nothing to MAP" in official.warnings


def test_x_track_ignores_labels_and_joins_lists(tmp_path):
    gold = x_lines([("d1", "a01.0", 100, 200), ("d1", "0dt70zz", 300, 310), ("d2", "b02.1", 0, 10)])
    pred = "d1\t95 205\tPROCEDIMIENTO\tA01.0\nd1\t300 310\tPROEDIMIENTO\t0dt70zz\nd2\t0 9\tDIAGNOSTICO\tb02.1\n"
    d_list, p_list = tmp_path / "d.tsv", tmp_path / "p.tsv"
    d_list.write_text("A01.0\tx\nB02.1\tx\n")
    p_list.write_text("0DT70ZZ\tx\n")
    gold_path, pred_path, _ = files(tmp_path, gold, pred)
    report = score_codiesp(gold_path, pred_path, [d_list, p_list], track="x", profile="codiesp2020")
    assert report.inputs["track"] == "X" and report.inputs["valid_codes"] == [str(d_list), str(p_list)]
    micro = report.score("micro")
    assert (micro["tp"], micro["fp"], micro["fn"], micro["precision"], micro["recall"]) == (2, 1, 1, 0.667, 0.667)
    rows = {row["document"]: row for row in report.per_document}
    assert (rows["d2"]["precision"], rows["d2"]["recall"], rows["d2"]["f1"]) == (None, None, None)  # nothing found
    only_d = score_codiesp(gold_path, pred_path, [d_list], track="X", profile="codiesp2020")
    assert only_d.score("micro")["tp"] == 1
    assert only_d.warnings[0].startswith("1 predicted codes are in no valid-code list")


def test_x_odd_predicted_spans_are_scored_as_written(tmp_path):
    gold = "d1\tDIAGNOSTICO\ta01.0\tref\t0 5;20 30\nd1\tDIAGNOSTICO\tb02.1\tref\t3 8\n"
    pred = "d1\t0 30\tDIAGNOSTICO\ta01.0\nd1\t-2 9\tDIAGNOSTICO\tb02.1\n"
    report = score(tmp_path, gold, pred, track="X")
    assert report.score("micro")["tp"] == 2
    assert "1 predicted spans end before they start or start at a negative offset" in report.warnings[0]


offsets = st.integers(-3, 60)
gold_offsets = st.integers(0, 60)
fragments = st.lists(st.tuples(gold_offsets, gold_offsets).map(sorted), min_size=1, max_size=3)  # in any order
x_documents = st.sampled_from(["d1", "d2", "d3", "D1"])
x_gold = st.lists(st.tuples(x_documents, codes, fragments), min_size=1, max_size=12)
x_pred = st.lists(st.tuples(x_documents, codes, offsets, offsets), max_size=25)


@settings(max_examples=150, deadline=None)
@given(x_gold, x_pred, st.sampled_from(["standard", "codiesp2020"]))
def test_x_small_files_score_as_the_columns_do(gold, pred, profile):
    """Below tsv.SMALL bytes of predictions CodiEsp-X is read and matched in plain Python, one document at a time;
    the same files read as numpy columns and matched all at once give the same report: every count, value,
    per-document row and warning (invalid and upper-case codes, inverted and negative spans, gold pieces listed
    out of order, documents on one side only)."""
    gold_text = "".join(
        f"{d}\tDIAGNOSTICO\t{c}\tref\t{';'.join(f'{a} {b}' for a, b in pieces)}\n" for d, c, pieces in gold
    )
    pred_text = "".join(f"{d}\t{a} {b}\tDIAGNOSTICO\t{c}\n" for d, c, a, b in pred)
    with tempfile.TemporaryDirectory() as folder:
        plain = score(Path(folder), gold_text, pred_text, track="X", profile=profile).as_dict()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(tsv, "SMALL", 0)  # every prediction file read as columns
            columns = score(Path(folder), gold_text, pred_text, track="X", profile=profile).as_dict()
    assert plain == columns


def test_same_input_same_json(tmp_path):
    gold, pred = lines([("d2", "a01.0"), ("d1", "b02.1")]), lines([("d2", "b02.1"), ("d3", "a01.0")])
    first = json.dumps(score(tmp_path, gold, pred).as_dict())
    assert first == json.dumps(score(tmp_path, gold, pred).as_dict())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"track": "Q"}, "unknown track 'Q'"),
        ({"track": "D", "k": [0]}, "cutoffs k must be positive integers"),
        ({"track": "D", "profile": "trec"}, "unknown profile 'trec' for codiesp"),
    ],
)
def test_bad_options(tmp_path, options, message):
    gold_path, pred_path, lists = files(tmp_path, lines([("d1", "a01.0")]), lines([("d1", "a01.0")]))
    with pytest.raises(LookupError if "profile" in options else InputError, match=message):
        score_codiesp(gold_path, pred_path, lists, **options)
    with pytest.raises(InputError, match="at least one valid-code list"):
        score_codiesp(gold_path, pred_path, [], track="D")


def test_profiles_are_documented():
    for name in ("standard", "codiesp2020"):
        profile = profiles.get("codiesp", name)
        assert all(doc for _, _, doc in profiles.describe(profile))
    assert profiles.names("codiesp") == ["codiesp2020", "standard"]


def test_the_cycle_collector_is_left_as_it_was(tmp_path):
    gold, pred = lines([("d1", "a01.0")]), lines([("d1", "a01.0")])
    assert gc.isenabled()
    score(tmp_path, gold, pred)
    assert gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(InputError):
            score(tmp_path, gold, "d1\ta01.0\textra\n")
        assert not gc.isenabled()
    finally:
        gc.enable()
