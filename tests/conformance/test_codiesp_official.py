"""``codiesp2020`` reproduces what the official CodiEsp scripts printed, case by case.

``codiesp_official_cases.json``: small hand-made inputs that were run through
TeMU-BSC/codiesp-evaluation-script @ 976fc11 (``codiespD_P_evaluation.py``
with trectools 0.0.42, ``comp_f1_diag_proc.py``, ``codiespX_evaluation.py``;
Python 3.11, pandas 1.5.3, numpy 1.26.4), with what each printed: MAP, micro
P/R/F1, the per-document tables (``"nan"`` where they print nan), the
``UserWarning`` messages, or the last line of the exception it died of. A
case's ``track`` (D unless given) is nlpbench's ``--track``; the scripts do
not know it. Where a script crashes or silently misreads bad input, nlpbench
gives the error line of ``CRASHES`` instead (an empty gold file among them: nothing to
score against is an error under every profile); where it crashes on valid input,
nlpbench scores it by the script's formulas (``SCORED_DESPITE_CRASH``) and
warns which script fails with which exception.

To record a case: write the files of the case into an empty directory and
run the script there, e.g. ``python codiespX_evaluation.py -g gold.tsv -p
pred.tsv -cD codes_d.tsv -cP codes_p.tsv`` (``-c codes.tsv`` for the other
two), in a virtual environment with the packages above.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlpbench.errors import InputError
from nlpbench.tasks.codiesp import score_codiesp

CASES = json.loads((Path(__file__).parent / "codiesp_official_cases.json").read_text(encoding="utf-8"))
SCRIPT_TRACK = {"map": "D", "f1": "D", "x": "X"}
SCRIPT = {"map": "codiespD_P_evaluation.py", "f1": "comp_f1_diag_proc.py", "x": "codiespX_evaluation.py"}

#: An empty gold file: the official scripts crash on it, nlpbench refuses it (nothing to score against).
EMPTY_GOLD = (
    "empty_gold_file_map",
    "empty_gold_with_predictions_map",
    "empty_gold_and_pred_map",
    "empty_gold_file_f1",
    "empty_gold_with_predictions_f1",
    "empty_gold_and_pred_f1",
    "x_empty_gold",
    "x_empty_gold_with_predictions",
    "x_empty_gold_and_pred",
)
#: Official crash (or, for comp_f1, silent misreading) of bad input → the error nlpbench reports.
CRASHES = {
    "wrong_column_count_pred_map": ("pred", "line 1: expected 2 tab-separated fields (case, code), found 3"),
    "wrong_column_count_gold_map": ("gold", "line 1: expected 2 tab-separated fields (case, code), found 3"),
    "ragged_later_row_pred_map": ("pred", "line 2: expected 2 tab-separated fields"),
    "wrong_column_count_pred_f1": ("pred", "line 1: expected 2 tab-separated fields"),
    "wrong_column_count_gold_f1": ("gold", "line 1: expected 2 tab-separated fields"),
    "ragged_later_row_pred_f1": ("pred", "line 2: expected 2 tab-separated fields"),
    "x_discontinuous_prediction": ("pred", "line 1: discontinuous predicted span '10 20;30 40'"),
    "x_non_integer_offset": ("pred", "line 1: predicted span '10.5 20' is not two integer offsets"),
    "x_wrong_columns_pred": ("pred", "line 1: expected 4 tab-separated fields"),
    "x_wrong_columns_gold": ("gold", "line 1: expected 5 tab-separated fields"),
    "x_gold_position_without_space": ("gold", "line 1: reference position '10' is not 'start end'"),
    **dict.fromkeys(EMPTY_GOLD, ("gold", "the gold holds no codes: there is nothing to score against")),
}
NO_PREDICTION = (None, 0.0, None)  # precision 0/0, recall 0, F1 undefined
#: The official script crashed on valid input: what nlpbench reports instead (MAP, or micro P/R/F1).
SCORED_DESPITE_CRASH = {
    # all-digit codes make pandas read an integer column; comp_f1 (read as text) gives 1.0 on the same files
    "numeric_only_codes_map": 1.0,
    "empty_pred_file_map": None,
    "blank_lines_only_pred_map": None,
    "empty_pred_two_documents_map": None,
    "empty_pred_track_p_map": None,
    "x_empty_pred": NO_PREDICTION,
    "x_empty_pred_two_documents": NO_PREDICTION,
    "x_blank_lines_only_pred": NO_PREDICTION,
    "x_no_valid_code": NO_PREDICTION,
    "x_no_valid_code_two_documents": NO_PREDICTION,
    "numeric_only_predicted_codes_map": 0.5,  # 0016070 found at rank 1 of 2 gold codes
    "x_numeric_only_codes": (1.0, 1.0, 1.0),
    "numeric_only_valid_codes_f1": (1.0, 1.0, 1.0),
}
#: What the official scripts warn about, and the words of nlpbench's warning about the same thing.
OFFICIAL_WARNINGS = {
    "None of the predicted codes are considered valid codes": ("no predictions", "none of the"),
    "Global F1 score automatically set to zero to avoid division by zero": None,
    "Some documents do not have predicted codes, document-wise F-score not computed for them.": None,
    "Some documents do not have predicted codes, document-wise Precision not computed for them.": None,
    "Some documents do not have Gold Standard codes, document-wise F-score not computed for them.": None,
    "Some documents do not have Gold Standard codes, document-wise Recall not computed for them.": None,
}


def run(case: dict, tmp_path: Path):
    files = {}
    for side in ("gold", "pred", "codes", "codes_d", "codes_p"):
        if side in case:
            files[side] = tmp_path / f"{side}.tsv"
            files[side].write_text(case[side], encoding="utf-8")
    lists = [files[key] for key in ("codes", "codes_d", "codes_p") if key in files]
    track = case.get("track", SCRIPT_TRACK[case["script"]])
    report = score_codiesp(files["gold"], files["pred"], lists, track=track, profile="codiesp2020")
    return report, files


def official(value):
    return None if value == "nan" else value


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_official_case(case, tmp_path):
    expected = case["official"]
    if case["name"] in CRASHES:
        side, message = CRASHES[case["name"]]
        with pytest.raises(InputError) as raised:
            run(case, tmp_path)
        assert str(raised.value).startswith(f"{tmp_path / (side + '.tsv')}: {message}")
        return
    report, _ = run(case, tmp_path)
    if case["name"] in SCORED_DESPITE_CRASH:
        scored = SCORED_DESPITE_CRASH[case["name"]]
        if case["script"] == "map":
            assert report.score("map")["value"] == scored
        else:
            micro = report.score("micro")
            assert (micro["precision"], micro["recall"], micro["f1"]) == scored
        failure = f"the official {SCRIPT[case['script']]} fails on this input ({expected['error']})"
        assert any(warning.startswith(failure) for warning in report.warnings), report.warnings
        return
    assert not any(warning.startswith(f"the official {SCRIPT[case['script']]} ") for warning in report.warnings)
    for warning in expected.get("warnings", []):
        words = OFFICIAL_WARNINGS[warning]
        assert words is None or any(w in " ".join(report.warnings) for w in words)
    if case["script"] == "map":
        assert report.score("map")["value"] == official(expected["map"])
        return
    micro = report.score("micro")
    assert (micro["precision"], micro["recall"], micro["f1"]) == tuple(
        official(expected["micro"][k]) for k in ("precision", "recall", "f1")
    )
    rows = {row["document"]: row for row in report.per_document if row["metric"] == "micro"}
    for column, table in (("precision", "per_doc_precision"), ("recall", "per_doc_recall"), ("f1", "per_doc_f1")):
        printed = {doc: official(value) for doc, value in expected[table].items()}
        ours = {doc: row[column] for doc, row in rows.items() if doc in printed or row[column] is not None}
        assert ours == printed, column
    if "pipe_line" in expected:
        p, r, f = ("nan" if micro[k] is None else micro[k] for k in ("precision", "recall", "f1"))
        f_printed = "0" if p == r == 0 else f  # comp_f1 sets F1 to the integer 0 when P + R = 0
        assert expected["pipe_line"] == f"{p}|{r}|{f_printed}"


def test_every_crash_and_exception_is_covered():
    names = {c["name"] for c in CASES}
    assert set(CRASHES) <= names and set(SCORED_DESPITE_CRASH) <= names
    crashed = {c["name"] for c in CASES if "error" in c["official"]}
    assert crashed <= set(CRASHES) | set(SCORED_DESPITE_CRASH) and set(SCORED_DESPITE_CRASH) <= crashed
