"""``score_timelines``: every number of the official eval_timeline.py runs, rule by rule, and the standard profile."""

from __future__ import annotations

from datetime import date

import pytest

from nlpbench.errors import InputError
from nlpbench.tasks.timelines import score_timelines
from tests.tasks.timeline_cases import Files, case, case_files, official_cases, write_files

SCORED = [found for found in official_cases() if "error" not in found["expected"] and found["mode"] != "none"]


def score(files: Files, mode: str, profile: str = "chemotimelines2024", run_date: str = "2026-11-21"):
    reference = date.fromisoformat(run_date)
    return score_timelines(
        files.gold, files.pred, files.all_ids, gold_ids=files.gold_ids, mode=mode, profile=profile,
        reference_date=reference,
    )  # fmt: skip


def rows(report) -> dict[str, dict]:
    return {row["metric"]: row for row in report.scores}


def patient(report, name: str) -> tuple:
    row = next(row for row in report.per_document if row["document"] == name)
    return row["tp"], row["fp"], row["fn"], row["precision"], row["recall"], row["f1"]


@pytest.mark.parametrize("found", SCORED, ids=lambda c: f"{c['name']}-{c['mode']}-{c['run_date']}")
def test_every_number_the_official_script_printed(found, tmp_path):
    mode = "strict" if found["mode"] == "strict+month" else found["mode"]  # --strict wins over --relaxed_to
    report = score(case_files(tmp_path, found), mode, run_date=found["run_date"])
    expected, got = found["expected"], rows(report)
    assert {key: got["micro"][key] for key in expected["micro"]} == expected["micro"]
    for average in ("type_a", "type_b"):
        assert {key: got[average][key] for key in expected[average]} == expected[average]
    if expected["official"] is None:  # this version printed it in another mode; the formula is the same
        official = (expected["type_a"]["f1"] + expected["type_b"]["f1"]) / 2
        assert got["official"] == {"metric": "official", "f1": official}
    else:
        assert got["official"] == {"metric": "official", "f1": expected["official"]}
    for logged in expected["per_patient_nonempty_gold"]:
        assert patient(report, logged["patient"]) == (
            logged["true_pos"], logged["false_pos"], logged["false_neg"],
            logged["precision"], logged["recall"], logged["f1"],
        )  # fmt: skip


#: Each rule of eval_timeline.py, the official run that shows it, and the patient's (TP, FP, FN) there.
RULES = {
    "a tuple predicted twice is two TP, a missed tuple listed twice two FN": (
        "duplicates_in_pred_and_gold", "strict", "p1", (2, 1, 2)),
    "an FP sharing chemo and date with an FN is dropped, repeats too; sharing the date only is not": (
        "fp_dropped_when_sharing_chemo_date_with_fn", "strict", "p1", (0, 1, 1)),
    "a patient whose predictions were all dropped scores 0": (
        "patient_all_fp_dropped_zero_rule", "strict", "p1", (0, 0, 1)),
    "contains-1 stands for begins-on or ends-on and back, begins-on never for ends-on": (
        "label_relaxation", "day", "p1", (4, 0, 1)),
    "the range rule rescues inside the gold range, not an ends-on at its start or a begins-on at its end": (
        "range_rescue_of_false_positives", "day", "p1", (4, 2, 1)),
    "month mode reads YYYY-MM with the reference day, so the ends-on at the start month is rescued": (
        "range_rescue_of_false_positives", "month", "p1", (5, 1, 1)),
    "a rescued FN is dropped without a TP; TP+FN = 0 scores 0": (
        "range_rescue_of_false_negatives_only", "day", "p1", (0, 2, 0)),
    "a range needs begins-on and ends-on and runs from the earliest to the latest": (
        "range_requires_both_ends_and_uses_extremes", "day", "p1", (2, 2, 5)),
    "strict and day keep generic mentions": ("generic_chemo_suppression", "day", "p1", (0, 4, 5)),
    "month drops a generic mention sharing label and month; two generics drop each other": (
        "generic_chemo_suppression", "month", "p1", (1, 2, 1)),
    "month de-duplicates tuples": ("month_and_year_deduplication", "month", "p1", (1, 1, 0)),
    "year de-duplicates tuples": ("month_and_year_deduplication", "year", "p1", (1, 0, 0)),
    "a week is the Monday of strptime's %W week, one month only": ("iso_week_parsing", "month", "p1", (2, 1, 1)),
    "dates are compared as written in strict": ("timex_with_time_and_partial_dates", "strict", "p1", (0, 3, 3)),
    "a bare year is read with the reference month": ("timex_with_time_and_partial_dates", "month", "p1", (2, 1, 1)),
    "labels are case-sensitive and BEGINS-ON builds no range": ("uppercase_labels", "day", "p1", (1, 1, 2)),
}  # fmt: skip


@pytest.mark.parametrize("rule", RULES)
def test_rule(rule, tmp_path):
    name, mode, who, counts = RULES[rule]
    report = score(case_files(tmp_path, case(name, mode)), mode)
    assert patient(report, who)[:3] == counts


def test_results_follow_the_reference_date_as_the_script_follows_today(tmp_path):
    files = case_files(tmp_path, case("run_date_dependence_month", "month"))
    on_21st = score(files, "month", run_date="2026-11-21")
    on_28th = score(files, "month", run_date="2026-11-28")
    assert rows(on_21st)["micro"]["f1"] == pytest.approx(2 / 3)  # 2013-02 read as 2013-02-21 <= start 02-25
    assert rows(on_28th)["micro"]["f1"] == pytest.approx(0.8)  # 2013-02-28 is after it: rescued
    assert on_21st.inputs["reference_date"] == "2026-11-21"
    assert any("'2013-02' as 2013-02-21" in warning for warning in on_21st.warnings)
    year = case_files(tmp_path, case("run_date_dependence_year", "year", "2026-06-15"))
    assert rows(score(year, "year", run_date="2026-06-15"))["micro"]["tp"] == 2
    assert rows(score(year, "year", run_date="2026-11-21"))["micro"]["tp"] == 1


def test_type_a_counts_empty_gold_patients_and_type_b_does_not(tmp_path):
    report = score(case_files(tmp_path, case("type_a_vs_type_b_mixture", "strict")), "strict")
    got = rows(report)
    assert (got["type_a"]["patients"], got["type_b"]["patients"]) == (4, 2)
    assert [patient(report, p)[3:] for p in ("p3", "p4")] == [(1.0, 1.0, 1.0), (0.0, 0.0, 0.0)]
    assert patient(report, "p4")[:3] == (0, 1, 0)  # empty gold: its predictions are FP


def test_unscored_patients_are_named_in_warnings(tmp_path):
    found = case("gold_patient_missing_from_pred_and_unknown_pred_patient", "strict")
    report = score(case_files(tmp_path, found), "strict")
    assert report.warnings == [
        "1 gold patients have no prediction and are not scored: p2",
        "1 predicted patients are not in the gold and not scored: q9",
    ]
    assert report.inputs["patients"] == {"ids": 2, "gold": 2, "predicted": 2, "scored": 1}


def test_gold_ids_restrict_scoring_without_warning(tmp_path):
    report = score(case_files(tmp_path, case("gold_id_path_subset", "strict")), "strict")
    assert [row["document"] for row in report.per_document] == ["p1", "p2"]
    assert report.warnings == []


@pytest.mark.parametrize("mode", ["strict", "day", "month", "year"])
@pytest.mark.parametrize(
    ("name", "where", "value"),
    [
        ("crash_season_in_gold", "gold.json", "2013-SU"),
        ("crash_week_with_day", "gold.json", "2013-W05-3"),
        ("crash_invalid_day", "pred.json", "2013-02-30"),
        ("crash_winter_season", "pred.json", "2013-WI"),
    ],
)
def test_a_date_the_script_stops_on_is_one_error_naming_patient_and_value(name, where, value, mode, tmp_path):
    with pytest.raises(InputError) as raised:
        score(case_files(tmp_path, case(name, mode)), mode)
    assert raised.value.path == str(tmp_path / where)
    assert raised.value.record == "patient p1"
    assert f"date '{value}': eval_timeline.py cannot read it" in raised.value.problem


@pytest.mark.parametrize(
    ("name", "scores", "warning"),
    [
        ("crash_nothing_predicted", (0.0, 0.0, 0.0), "micro precision is 0/0"),
        ("crash_all_gold_empty_all_pred_empty", (0.0, 1.0, 0.0), "micro precision is 0/0"),
        ("crash_all_gold_empty_with_predictions", (0.0, 0.5, 0.0), "micro recall is 0/0"),
        ("crash_no_patient_scored", (0.0, 0.0, 0.0), "no patient was scored"),
    ],
)
def test_where_the_script_divides_by_zero_the_scores_are_zero_with_a_warning(name, scores, warning, tmp_path):
    report = score(case_files(tmp_path, case(name, "strict")), "strict")
    got = rows(report)
    assert (got["micro"]["f1"], got["type_a"]["f1"], got["type_b"]["f1"]) == scores
    assert any(warning in message and "ZeroDivisionError" in message for message in report.warnings)


@pytest.mark.parametrize(
    ("name", "where", "problem"),
    [
        ("crash_all_ids_count_mismatch_pred", "all_ids.txt", "3 ids, but the predictions hold 2 patients"),
        ("crash_all_ids_count_mismatch_gold", "all_ids.txt", "2 ids, but the gold holds 1 patients"),
        ("crash_empty_all_ids", "all_ids.txt", "no patient id"),
        ("crash_gold_ids_count", "gold_ids.txt", "1 gold ids, but the gold holds 2 patients and the predictions 3"),
        ("crash_gold_ids_not_in_gold", "gold.json", "patient p3 is listed in the gold ids but has no gold timeline"),
    ],
)
def test_the_count_checks_are_errors(name, where, problem, tmp_path):
    with pytest.raises(InputError) as raised:
        score(case_files(tmp_path, case(name, "strict")), "strict")
    assert raised.value.path == str(tmp_path / where)
    assert problem in raised.value.problem


def test_a_blank_id_line_counts_and_the_error_says_so(tmp_path):
    files = write_files(tmp_path, {"p1": []}, {"p1": []}, ["p1"])
    files.all_ids.write_text("p1\n\n")
    with pytest.raises(InputError, match="a blank line counts as an id"):
        score(files, "strict")


def test_dates_of_patients_never_scored_are_never_read(tmp_path):
    found = case("unparseable_dates_in_empty_gold_patients_are_ignored", "strict")
    assert rows(score(case_files(tmp_path, found), "strict"))["micro"]["tp"] == 1


@pytest.mark.parametrize("unscored", ["gold", "pred"])
def test_a_malformed_tuple_is_an_error_in_a_patient_that_is_not_scored(unscored, tmp_path):
    gold = {"p1": [["taxol", "contains-1", "2013-05-12"]], "p2": []}
    pred = {"p1": [["taxol", "contains-1", "2013-05-12"]], "p3": []}
    {"gold": gold, "pred": pred}[unscored]["p2" if unscored == "gold" else "p3"] = [["taxol", "contains-1"]]
    files = write_files(tmp_path, gold, pred, ["p1", "p2"], gold_ids=["p1", "p2"])  # p2 has no prediction
    with pytest.raises(InputError) as raised:
        score(files, "strict")
    assert raised.value.path == str(files.gold if unscored == "gold" else files.pred)
    assert raised.value.record == ("patient p2, tuple 0" if unscored == "gold" else "patient p3, tuple 0")


@pytest.mark.parametrize("other_problem", ["none", "ids", "pred", "tuple", "scored_before"])
@pytest.mark.parametrize("deep", ["gold", "pred"])
def test_a_file_nested_too_deep_is_refused_before_anything_else_is_said(deep, other_problem, tmp_path):
    """A timeline file's depth is checked when it is needed (a patient that is no timeline, any error): the
    error is the one a check of each file up front gives, whatever else is wrong, and wherever the deep patient."""
    deep_patient = "p3" if other_problem == "scored_before" else "p1"
    gold = {"p1": [["taxol", "contains-1", "2013-05-12"]], "p2": [], "p3": []}
    pred = {"p1": [["taxol", "contains-1", "2013-05-12"]], "p2": [["taxol", "contains-1"]], "p3": []}
    if other_problem != "tuple":
        pred["p2"] = []
    {"gold": gold, "pred": pred}[deep][deep_patient] = "DEEP"
    files = write_files(tmp_path, gold, pred, ["p1", "p2", "p3"] + (["p4"] if other_problem == "ids" else []))
    path = files.gold if deep == "gold" else files.pred
    path.write_text(path.read_text().replace('"DEEP"', "[" * 130 + "]" * 130))
    if other_problem == "pred" and deep == "gold":
        files.pred.write_text('{"p1": [')
    with pytest.raises(InputError) as raised:
        score(files, "strict")
    assert (raised.value.path, raised.value.record, raised.value.problem) == (
        str(path),
        None,
        "JSON nested deeper than 128 levels",
    )


# The standard profile: expected values worked out by hand from ISO 8601 intervals.


def standard(tmp_path, gold: list, pred: list, mode: str) -> tuple[int, int, int]:
    files = write_files(tmp_path, {"p1": gold}, {"p1": pred}, ["p1"])
    return patient(score(files, mode, profile="standard"), "p1")[:3]


@pytest.mark.parametrize(
    ("mode", "counts"),
    [("strict", (0, 3, 3)), ("day", (1, 2, 2)), ("month", (3, 0, 0)), ("year", (3, 0, 0))],
)
def test_standard_reads_iso_weeks_and_a_week_across_two_months_matches_both(mode, counts, tmp_path):
    found = case("iso_week_parsing", "strict")
    # ISO: 2013-W05 is Jan 28 - Feb 3 (Feb 10 outside, February inside), 2024-W05 Jan 29 - Feb 4, 2015-W10 Mar 2 - 8
    assert standard(tmp_path, found["gold"]["p1"], found["pred"]["p1"], mode) == counts


@pytest.mark.parametrize(
    ("mode", "counts"),
    [("strict", (1, 2, 2)), ("day", (3, 0, 0)), ("month", (3, 0, 0)), ("year", (3, 0, 0))],
)
def test_standard_months_and_years_are_intervals_and_times_of_day_are_ignored(mode, counts, tmp_path):
    found = case("timex_with_time_and_partial_dates", "strict")
    # 2013-05-12T10:00 is 2013-05-12; 2013-07 holds 2013-07-15 and 2014 holds 2014-03-03 once relaxed
    assert standard(tmp_path, found["gold"]["p1"], found["pred"]["p1"], mode) == counts


@pytest.mark.parametrize(
    ("mode", "counts"),
    [("strict", (2, 1, 1)), ("day", (3, 0, 1)), ("month", (3, 0, 1)), ("year", (3, 0, 0))],
)
def test_standard_compares_labels_case_insensitively(mode, counts, tmp_path):
    found = case("uppercase_labels", "strict")
    # BEGINS-ON/ENDS-ON now make the taxol range Jan 10 - Jun 20, which rescues contains-1 Mar 3 once relaxed
    assert standard(tmp_path, found["gold"]["p1"], found["pred"]["p1"], mode) == counts


@pytest.mark.parametrize("reference", ["2026-11-21", "2026-11-28", "2026-03-15"])
def test_standard_does_not_depend_on_the_reference_date(reference, tmp_path):
    files = case_files(tmp_path, case("run_date_dependence_month", "month"))
    report = score(files, "month", profile="standard", run_date=reference)
    assert patient(report, "p1")[:3] == (1, 0, 1)  # ends-on February is no rescue of a range starting in February
    assert "reference_date" not in report.inputs
    assert report.warnings == ["--reference-date is not used: standard dates do not depend on the day"]


@pytest.mark.parametrize(
    ("mode", "counts"),
    [("strict", (0, 2, 2)), ("day", (2, 0, 0)), ("month", (2, 0, 0))],
)
def test_standard_reads_seasons_as_month_ranges(mode, counts, tmp_path):
    gold = [["taxol", "contains-1", "2013-SU"], ["cisplatin", "contains-1", "2013-WI"]]
    pred = [["taxol", "contains-1", "2013-07-04"], ["cisplatin", "contains-1", "2014-02"]]
    assert standard(tmp_path, gold, pred, mode) == counts  # winter 2013 runs from December to February 2014


def test_standard_reads_iso_week_dates_and_refuses_what_is_no_date(tmp_path):
    assert standard(tmp_path, [["taxol", "contains-1", "2013-W05-3"]], [["taxol", "contains-1", "2013-01-30"]],
                    "strict") == (1, 0, 0)  # fmt: skip
    with pytest.raises(InputError) as raised:
        standard(tmp_path, [["taxol", "contains-1", "PRESENT_REF"]], [], "strict")
    assert raised.value.record == "patient p1"
    assert "date 'PRESENT_REF': not an ISO 8601 date" in raised.value.problem


def test_standard_prints_the_official_score_in_every_mode(tmp_path):
    files = case_files(tmp_path, case("type_a_vs_type_b_mixture", "month"))
    got = rows(score(files, "month", profile="standard"))
    assert got["official"]["f1"] == pytest.approx((got["type_a"]["f1"] + got["type_b"]["f1"]) / 2)


@pytest.mark.parametrize(
    ("ids", "gold_ids", "where", "problem"),
    [
        (["p1", "p3"], None, "pred.json", "patient p3 of"),
        (["p1"], None, "pred.json", "patient p2 is not listed in"),
        (["p1", "p2", "p1"], None, "all_ids.txt", "patient p1 is listed twice, on lines 1 and 3"),
        (["p1", "p2"], ["p1"], "gold.json", "patient p2 is not listed in"),
        (["p1", "p2"], ["p1", "p2", "p9"], "gold.json", "patient p9 of"),
    ],
)
def test_standard_checks_the_ids_themselves(ids, gold_ids, where, problem, tmp_path):
    gold = {"p1": [["taxol", "contains-1", "2013-05-12"]], "p2": []}
    files = write_files(tmp_path, gold, {"p1": [], "p2": []}, ids, gold_ids)
    with pytest.raises(InputError) as raised:
        score(files, "strict", profile="standard")
    assert raised.value.path == str(tmp_path / where)
    assert problem in raised.value.problem


def test_standard_skips_blank_id_lines(tmp_path):
    files = write_files(tmp_path, {"p1": [["taxol", "contains-1", "2013"]]}, {"p1": []}, ["p1", ""])
    report = score(files, "strict", profile="standard")
    assert rows(report)["micro"]["fn"] == 1
