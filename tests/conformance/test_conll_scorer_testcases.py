"""The 36 key/response pairs of the reference coreference scorer's test suite, under ``conll2012``.

Expected values and their sources: :mod:`tests.conformance.conll_scorer_expected`.
Every asserted (case, metric) passes with the suite's own tolerance, and every
count equals what the reference scorer printed.
"""

import json
from unittest import mock

import pytest

from nlpbench.metrics import assignment
from nlpbench.tasks.coref import score_coref
from tests.conformance.conll_scorer_expected import ASSERTED, COUNTS

pytestmark = pytest.mark.vectors

COUNT_FIELDS = ("recall_num", "recall_den", "precision_num", "precision_den")
BLANC_DIFFERS = {"TC-F-1", "TC-I-1", "TC-K-1", "TC-M-3", "TC-M-6", "TC-N-3", "TC-N-6"}


def score(vectors, case, profile="conll2012"):
    folder = vectors / "conll-scorer-testcases"
    key_file, _ = ASSERTED[case]
    return score_coref(folder / key_file, folder / f"{case}.response", profile=profile)


def test_the_table_covers_every_pair_of_the_folder(vectors):
    responses = {p.stem for p in (vectors / "conll-scorer-testcases").glob("*.response")}
    assert responses == set(ASSERTED) == set(COUNTS)
    assert len(responses) == 36


@pytest.mark.parametrize("case", sorted(ASSERTED))
def test_asserted_values_within_the_suite_tolerance(vectors, case):
    report = score(vectors, case)
    for metric, expected in ASSERTED[case][1].items():
        row = report.score(metric)
        got = (row["recall"], row["precision"], row["f1"])
        error = sum(abs(g - e) for g, e in zip(got, expected, strict=True))
        assert error < 1e-4, f"{case} {metric}: {got} != {expected}"


@pytest.mark.parametrize("case", sorted(COUNTS))
def test_counts_are_the_reference_scorers(vectors, case):
    report = score(vectors, case)
    for metric, expected in COUNTS[case].items():
        if metric == "blanc":
            coref, noncoref = report.score("blanc", label="coreference"), report.score("blanc", label="non-coreference")
            got = (
                *(coref[f] for f in ("recall_num", "recall_den", "precision_den")),
                *(noncoref[f] for f in ("recall_num", "recall_den", "precision_den")),
            )
            assert got == expected, f"{case} blanc"
        else:
            row = report.score(metric)
            assert [row[f] for f in COUNT_FIELDS] == pytest.approx(expected, abs=1e-9), f"{case} {metric}"


def test_repeated_response_mentions_reduce_to_the_same_clusters(vectors):
    """TC-A-7, 8 and 9 repeat one key mention 1, 1 and 10 times: v8.01 keeps the first, so all score as TC-A-4."""
    reference = score(vectors, "TC-A-4").scores
    for case, removed in (("TC-A-7", 1), ("TC-A-8", 1), ("TC-A-9", 10)):
        report = score(vectors, case)
        assert report.scores == reference
        assert f"repeated mentions removed, the first kept (rule response-repeats-of-key-mentions): {removed}" in (
            report.warnings
        )


def test_standard_differs_only_where_blanc_looks_at_the_response_too(vectors):
    """Keys of one entity (F1, I1, K1, M3, M6) or of singletons only (N3, N6), with responses that have the
    missing kind of links: v8.01 ignores those links, standard counts them."""
    for case in sorted(ASSERTED):
        conll2012 = score(vectors, case).scores
        standard = score(vectors, case, "standard").scores
        differing = {a["metric"] for a, b in zip(conll2012, standard, strict=True) if a != b and "label" not in a}
        assert differing == ({"blanc"} if case in BLANC_DIFFERS else set()), case
    report = score(vectors, "TC-N-3", "standard")
    assert (report.score("blanc")["recall"], report.score("blanc")["precision"]) == pytest.approx((11 / 30, 0.5))


def test_through_the_command_line(vectors, cli):
    folder = vectors / "conll-scorer-testcases"
    result = cli(
        "score", "coref", "--key", folder / "TC-A.key", "--response", folder / "TC-A-4.response",
        "--profile", "conll2012", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0
    rows = {(r["metric"], r.get("label")): r for r in json.loads(result.stdout)["scores"]}
    assert [rows["ceafe", None][f] for f in COUNT_FIELDS] == pytest.approx([2.2, 3, 2.2, 4])
    assert rows["blanc", None]["f1"] == pytest.approx(0.30357, abs=1e-5)
    assert rows["conll", None] == {"metric": "conll", "f1": pytest.approx((1 / 3 + 0.46832 + 0.62857) / 3, abs=1e-5)}


@pytest.mark.parametrize("profile", ["conll2012", "standard"])
def test_every_case_scores_the_same_with_the_plain_assignment(vectors, profile):
    """Each case's CEAF matrices are small: solved in plain Python, as a command that has not loaded numpy solves
    them, every case's report is the one the arrays and scipy give, bit for bit."""
    for case in sorted(COUNTS):
        with_scipy = score(vectors, case, profile).as_dict()
        with mock.patch.object(assignment, "in_plain", lambda cells: cells <= assignment.SMALL):
            assert score(vectors, case, profile).as_dict() == with_scipy, case
