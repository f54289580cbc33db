"""``score_i2b2`` under ``standard``: the evaluations of evaluate.py done right, and each quirk's difference."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.errors import InputError
from nlpbench.metrics import deid
from nlpbench.metrics.counts import PRF
from nlpbench.tasks.i2b2 import Selection, score_i2b2
from tests.conformance.i2b2_cases import GOLD, TEXT, at, t, tag, xml


def write(root: Path, system: dict[str, list[str]], gold: dict[str, list[str]], text: str = TEXT) -> tuple[Path, Path]:
    for side, notes in (("system", system), ("gold", gold)):
        (root / side).mkdir(exist_ok=True)
        for name, tags in notes.items():
            (root / side / f"{name}.xml").write_text(xml(text, tags), encoding="utf-8")
    return root / "system", root / "gold"


def score(root: Path, system, gold, profile="standard", **kw):
    system_path, gold_path = write(root, system, gold)
    return score_i2b2(gold_path, system_path, profile=profile, **kw)


def counts(report, metric, label=None):
    row = report.score(metric, label=label)
    return row["tp"], row["fp"], row["fn"]


def test_perfect_system_scores_one_everywhere(tmp_path):
    report = score(tmp_path, {"100-01": GOLD}, {"100-01": GOLD})
    for row in report.scores:
        if row["metric"].startswith("hipaa") and row.get("label") in ("PROFESSION", "OTHER"):
            continue  # no HIPAA tag of these categories: nothing to score
        if row.get("label") == "OTHER":
            continue
        assert row["f1"] == 1.0, row


def test_duplicates_count_once_in_the_script_and_as_often_as_they_occur_in_standard(tmp_path):
    system = {"100-01": GOLD[:3] + GOLD[:3]}
    assert counts(score(tmp_path, system, {"100-01": GOLD[:3]}), "strict") == (3, 3, 0)
    assert counts(score(tmp_path, system, {"100-01": GOLD[:3]}, "i2b2-2014"), "strict") == (3, 0, 0)


def test_relaxed_ends_match_one_to_one_in_standard(tmp_path):
    start, _ = at(TEXT, "Jane Q. Doe")
    gold = {"100-01": [tag("NAME", start, start + e, "PATIENT") for e in (7, 11)]}
    system = {"100-01": [tag("NAME", start, start + 9, "PATIENT")]}
    assert counts(score(tmp_path, system, gold), "relaxed") == (1, 0, 1)
    # the script's sets: the one system tag equals both gold tags, so no gold tag is missed
    assert counts(score(tmp_path, system, gold, "i2b2-2014"), "relaxed") == (1, 0, 0)
    # ends 3 apart do not match in either
    far = {"100-01": [tag("NAME", start, start + 14, "PATIENT")]}
    assert counts(score(tmp_path, far, gold), "relaxed") == (0, 1, 2)


def test_a_missing_system_file_is_all_false_negatives_in_standard_and_not_scored_in_the_script(tmp_path):
    gold = {"100-01": GOLD[:4], "100-02": GOLD[:6]}
    standard = score(tmp_path, {"100-01": GOLD[:4]}, gold)
    assert counts(standard, "strict") == (4, 0, 6)
    assert standard.score("strict")["documents"] == 2
    assert any(
        "1 gold notes have no file" in w and "scored as notes without system tags" in w for w in standard.warnings
    )
    script = score(tmp_path, {"100-01": GOLD[:4]}, gold, "i2b2-2014")
    assert counts(script, "strict") == (4, 0, 0)
    assert script.score("strict")["documents"] == 1


def test_extra_system_files_are_warned_about_and_not_scored(tmp_path):
    report = score(tmp_path, {"100-01": GOLD[:4], "900-01": GOLD}, {"100-01": GOLD[:4]})
    assert counts(report, "strict") == (4, 0, 0)
    assert any("have no gold file (900-01" in w for w in report.warnings)


def test_empty_tags_give_no_token_in_standard_and_an_empty_one_in_the_script(tmp_path):
    dash, _ = at(TEXT, "--")
    gold = {"100-01": [tag("DATE", dash, dash + 2, "DATE")]}
    assert counts(score(tmp_path, {"100-01": []}, gold), "token") == (0, 0, 0)
    assert counts(score(tmp_path, {"100-01": []}, gold, "i2b2-2014"), "token") == (0, 0, 1)


def test_type_case_and_idnum_are_hipaa_in_standard_only(tmp_path):
    gold = {"100-01": [t("NAME", "Jane Q. Doe", "patient"), t("ID", "77", "IDNUM")]}
    standard = score(tmp_path, gold, gold)
    assert counts(standard, "hipaa_strict") == (2, 0, 0)
    script = score(tmp_path, gold, gold, "i2b2-2014")
    assert counts(script, "hipaa_strict") == (0, 0, 0)


def test_lower_case_type_matches_tags_but_not_tokens_in_the_script(tmp_path):
    system, gold = {"100-01": [t("NAME", "Jane Q. Doe", "patient")]}, {"100-01": [t("NAME", "Jane Q. Doe", "PATIENT")]}
    script = score(tmp_path, system, gold, "i2b2-2014")
    assert counts(script, "strict") == (1, 0, 0)
    assert counts(script, "token") == (0, 3, 3)
    assert counts(score(tmp_path, system, gold), "token") == (3, 0, 0)


def test_macro_leaves_out_notes_without_a_denominator_in_standard(tmp_path):
    system = {"100-01": GOLD[:2], "100-02": []}
    gold = {"100-01": GOLD[:4], "100-02": GOLD[:2]}
    standard = score(tmp_path, system, gold).score("strict", average="macro")
    assert standard["precision"] == 1.0  # the note without system tags has no precision
    assert standard["recall"] == pytest.approx(0.25)
    script = score(tmp_path, system, gold, "i2b2-2014").score("strict", average="macro")
    assert script["precision"] == 0.5
    assert script["precision_sd"] == 0.5


def test_filter_selects_every_evaluation_in_standard_but_only_the_first_three_in_the_script(tmp_path):
    system = {"100-01": GOLD[:10]}
    gold = {"100-01": GOLD}
    standard = score(tmp_path, system, gold, selection=Selection(("name",)))
    assert counts(standard, "strict") == (2, 0, 0)
    assert counts(standard, "binary_strict") == (2, 0, 0)
    assert counts(standard, "hipaa_strict") == (1, 0, 0)  # the patient's name
    assert counts(standard, "strict", "DATE") == (0, 0, 0)
    script = score(tmp_path, system, gold, "i2b2-2014", selection=Selection(("NAME",)))
    assert counts(script, "strict") == (2, 0, 0)
    assert counts(script, "binary_strict") == (10, 0, 17)


def test_invert_turns_the_scripts_hipaa_evaluations_into_non_hipaa_ones(tmp_path):
    gold = {"100-01": GOLD}
    script = score(tmp_path, gold, gold, "i2b2-2014", selection=Selection(("DATE",), invert=True))
    standard = score(tmp_path, gold, gold, selection=Selection(("DATE",), invert=True))
    dates, hipaa = 2, 19  # GOLD has 2 dates and 19 HIPAA tags (IDNUM among them)
    assert counts(standard, "hipaa_strict") == (hipaa - dates, 0, 0)
    assert counts(script, "hipaa_strict") == (len(GOLD) - (hipaa - 1), 0, 0)  # the non-HIPAA tags, IDNUM too


def test_filter_words_standard_rejects_what_the_script_reads_as_everything(tmp_path):
    with pytest.raises(InputError, match="neither a category"):
        score(tmp_path, {"100-01": GOLD}, {"100-01": GOLD}, selection=Selection(("PATIENTS",)))
    report = score(tmp_path, {"100-01": GOLD}, {"100-01": GOLD}, "i2b2-2014", selection=Selection(("PATIENTS",)))
    assert counts(report, "strict") == (len(GOLD), 0, 0)
    assert any("keeps every tag" in w for w in report.warnings)
    with pytest.raises(InputError, match="need --filter"):
        score(tmp_path, {"100-01": GOLD}, {"100-01": GOLD}, selection=Selection((), invert=True))


def test_offsets_outside_the_text_are_an_error_in_standard_only(tmp_path):
    system = {"100-01": [tag("DATE", len(TEXT) - 3, len(TEXT) + 4, "DATE")]}
    with pytest.raises(InputError, match=r"offsets \d+-\d+ outside the text"):
        score(tmp_path, system, {"100-01": []})
    assert counts(score(tmp_path, system, {"100-01": []}, "i2b2-2014"), "strict") == (0, 1, 0)


def test_different_note_texts_are_an_error(tmp_path):
    system, gold = write(tmp_path, {"100-01": []}, {})
    write(tmp_path, {}, {"100-01": []}, text=TEXT + "x")
    with pytest.raises(InputError, match="note text differs"):
        score_i2b2(gold, system)


def test_several_systems_are_scored_apart(tmp_path):
    (tmp_path / "system").mkdir()
    (tmp_path / "system" / "100-01a.xml").write_text(xml(TEXT, GOLD), encoding="utf-8")
    (tmp_path / "system" / "100-01b.xml").write_text(xml(TEXT, GOLD[:1]), encoding="utf-8")
    _, gold = write(tmp_path, {}, {"100-01": GOLD})
    report = score_i2b2(gold, tmp_path / "system")
    assert {
        (r["system"], r["tp"]) for r in report.scores if r["metric"] == "strict" and "tp" in r and not r["label"]
    } == {
        ("a", len(GOLD)),
        ("b", 1),
    }


def test_micro_counts_are_the_sums_of_the_per_document_counts(tmp_path):
    report = score(tmp_path, {"100-01": GOLD[::2], "100-02": GOLD[1::3]}, {"100-01": GOLD, "100-02": GOLD[:9]})
    for metric in ("token", "strict", "relaxed", "binary_token"):
        rows = [r for r in report.per_document if r["metric"] == metric and r["label"] is None]
        assert len(rows) == 2
        assert counts(report, metric) == tuple(sum(r[k] for r in rows) for k in ("tp", "fp", "fn"))


ENDS = st.lists(st.integers(0, 12), max_size=6)


@settings(max_examples=200, deadline=None)
@given(ENDS, ENDS)
def test_one_to_one_relaxed_matching_is_a_largest_matching(gold_ends, system_ends):
    """Against a brute force over every assignment of system ends to gold ends."""
    from itertools import permutations

    prf = deid.relaxed([("A", e) for e in gold_ends], [("A", e) for e in system_ends], 2, sets=False)
    small, large = sorted((gold_ends, system_ends), key=len)
    best = max(
        (
            sum(abs(a - b) <= 2 for a, b in zip(small, chosen, strict=False))
            for chosen in permutations(large, len(small))
        ),
        default=0,
    )
    assert prf == PRF(best, len(system_ends) - best, len(gold_ends) - best)


def test_tokens_are_ascii_letter_and_digit_runs():
    assert deid.tokens("a Jane-Doe, 42x é7", 2, 18, empty_token=True) == [(2, 6), (7, 10), (12, 15), (17, 18)]
    assert deid.tokens("a -- b", 2, 4, empty_token=True) == [(4, 4)]
    assert deid.tokens("a -- b", 2, 4, empty_token=False) == []
    assert deid.tokens("abc", 2, 9, empty_token=True) == [(2, 3)]


def test_elements_that_are_not_phi_tags_and_tags_without_type_are_warned_about(tmp_path):
    b, e = at(TEXT, "Boston")
    system = {"100-01": [tag("name", b, e, "PATIENT"), tag("DIABETES", b, e, "X"), tag("LOCATION", b, e, None)]}
    report = score(tmp_path, system, {"100-01": [tag("LOCATION", b, e, "CITY")]})
    assert counts(report, "strict") == (0, 1, 1)
    assert counts(report, "binary_strict") == (1, 0, 0)
    assert "1 <name> elements are not PHI tags: not scored" in report.warnings
    assert "1 <DIABETES> elements are not PHI tags: not scored" in report.warnings
    assert "1 PHI tags have no TYPE: read as TYPE=''" in report.warnings


def numpy_mean_sd(values):
    import numpy as np

    array = np.array(values, dtype=float)
    return float(array.mean()), float(array.std())


#: Per-document precisions and recalls as the script makes them (tp / (tp + fp), 0 without a denominator), and
#: arbitrary non-negative floats.
COUNTS = st.integers(0, 60)
FRACTIONS = st.builds(lambda tp, extra: tp / (tp + extra) if tp + extra else 0.0, COUNTS, COUNTS)
VALUES = st.one_of(FRACTIONS, st.floats(0, 1e9, allow_subnormal=True))


@settings(max_examples=1000)
@given(st.lists(VALUES, min_size=1, max_size=deid.PAIRWISE_FROM - 1))
def test_the_plain_mean_and_deviation_are_numpys_to_the_bit(values):
    assert deid.mean_sd(values) == numpy_mean_sd(values)


@settings(max_examples=100)
@given(st.lists(VALUES, min_size=deid.PAIRWISE_FROM, max_size=40))
def test_from_eight_values_numpy_sums_them(values):
    assert deid.mean_sd(values) == numpy_mean_sd(values)
    assert deid.mean_sd([]) == (None, None)


def test_numpy_sums_eight_values_otherwise_than_in_order():
    """Why the plain sum stops at 8: numpy's pairwise summation adds 8 values as (x0 + x1) + (x2 + x3) + …"""
    import numpy as np

    values = [1.0, 1e16, -1e16, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert float(np.array(values).sum()) == 0.0 and deid._in_order(values) == 1.0
    assert float(np.array(values[:7]).sum()) == deid._in_order(values[:7]) == 1.0
