import json

import pytest

from tests.cli.errors import one_line_error

GOLD_D = "S1\tn39.0\nS1\tr52\nS1\tr52\nS2\ta53.9\n"
PRED_D = "S1\tR52\nS1\tCODE6\nS1\tn39.0\nS3\ta53.9\n"
GOLD_X = "S1\tDIAGNOSTICO\tn39.0\tinfección urinaria\t10 30\nS1\tPROCEDIMIENTO\tbw40zzz\teco\t50 55;60 70\n"
PRED_X = "S1\t8 31\tDIAGNOSTICO\tn39.0\nS1\t50 70\tPROCEDIMIENTO\tbw40zzz\n"


@pytest.fixture
def inputs(tmp_path):
    def make(gold=GOLD_D, pred=PRED_D, codes="N39.0\tdesc\nR52\tdesc\nA53.9\tdesc\nBW40ZZZ\tdesc\n"):
        paths = tmp_path / "gold.tsv", tmp_path / "pred.tsv", tmp_path / "codes.tsv"
        for path, text in zip(paths, (gold, pred, codes), strict=True):
            path.write_text(text, encoding="utf-8")
        return paths

    return make


def test_track_d_json_rows(cli, inputs):
    gold, pred, codes = inputs()
    result = cli("score", "codiesp", "--track", "D", "--gold", gold, "--pred", pred, "--valid-codes", codes,
                 "--profile", "codiesp2020", "--format", "json")  # fmt: skip
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert list(report) == ["task", "profile", "inputs", "scores", "per_document", "warnings"]
    assert report["inputs"] == {"track": "D", "gold": str(gold), "pred": str(pred), "valid_codes": [str(codes)]}
    # S1: r52 and n39.0 at ranks 1 and 2 of 2 gold codes, AP 1; S3 is not in the gold (0); S2 left out
    assert report["scores"] == [
        {"metric": "map", "documents": 2, "sum": 1.0, "value": 0.5},
        {"metric": "micro", "tp": 2, "fp": 1, "fn": 1, "precision": 0.667, "recall": 0.667, "f1": 0.667},
    ]
    assert [(row["document"], row["metric"]) for row in report["per_document"]] == [
        ("S1", "map"), ("S1", "micro"), ("S2", "map"), ("S2", "micro"), ("S3", "map"), ("S3", "micro")]  # fmt: skip
    assert "1 predicted codes are in no valid-code list and were removed before ranking: code6" in result.stderr


def test_standard_is_the_default_with_extras(cli, inputs):
    gold, pred, codes = inputs()
    result = cli("score", "codiesp", "--track", "d", "-g", gold, "-p", pred, "-c", codes, "--k", "1", "-f", "json")
    report = json.loads(result.stdout)
    assert report["profile"] == "standard" and report["inputs"]["k"] == [1]
    assert [row["metric"] for row in report["scores"]] == [
        "map", "map@1", "precision@1", "recall@1", "micro", "category_micro"]  # fmt: skip
    assert report["scores"][0] == {"metric": "map", "documents": 2, "sum": 1.0, "value": 0.5}  # S1 1.0, S2 0


def test_track_x_with_two_lists_as_a_table(cli, inputs, tmp_path):
    gold, pred, codes = inputs(GOLD_X, PRED_X, "N39.0\tdesc\n")
    p_codes = tmp_path / "p.tsv"
    p_codes.write_text("BW40ZZZ\tdesc\n")
    result = cli("score", "codiesp", "--track", "x", "--gold", gold, "--pred", pred, "--valid-codes", codes,
                 "--valid-codes", p_codes)  # fmt: skip
    assert result.exit_code == 0
    assert "codiesp · profile standard" in result.stdout
    assert "micro" in result.stdout and "map" not in result.stdout
    report = json.loads(cli("score", "codiesp", "--track", "X", "-g", gold, "-p", pred, "-c", codes, "-c", p_codes,
                            "-f", "json").stdout)  # fmt: skip
    assert report["scores"][0] == {"metric": "micro", "tp": 2, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0,
                                   "f1": 1.0}  # fmt: skip


@pytest.mark.parametrize(
    ("track", "gold", "pred", "bad", "message"),
    [
        (
            "D",
            GOLD_D,
            "S1\tn39.0\tDIAGNOSTICO\n",
            "pred",
            "line 1: expected 2 tab-separated fields (case, code), found 3",
        ),
        ("X", GOLD_X, "S1\t8.5 31\tDIAGNOSTICO\tn39.0\n", "pred", "line 1: predicted span '8.5 31' is not two integer"),
        ("X", GOLD_X, "S1\t50 55;60 70\tP\tbw40zzz\n", "pred", "line 1: discontinuous predicted span '50 55;60 70'"),
        ("X", GOLD_X, "S1\tn39.0\n", "pred", "line 1: expected 4 tab-separated fields"),
        ("X", GOLD_D, PRED_X, "gold", "line 1: expected 5 tab-separated fields"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, inputs, track, gold, pred, bad, message):
    paths = dict(zip(("gold", "pred", "codes"), inputs(gold, pred), strict=True))
    result = cli("score", "codiesp", "--track", track, "--gold", paths["gold"], "--pred", paths["pred"],
                 "--valid-codes", paths["codes"])  # fmt: skip
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"nlpbench: error: {paths[bad]}: {message}")


NO_VALID = "none of the {} predicted codes is in the valid-code lists (are the lists and --track the right ones?)"


@pytest.mark.parametrize(
    ("track", "pred", "first_warning", "failure"),
    [
        ("D", "S1\tXXX\nS3\tYYY\n", NO_VALID.format(2), None),
        ("P", "S1\tzzz\n", NO_VALID.format(1), None),
        ("D", "", "the prediction file has no predictions", "codiespD_P_evaluation.py fails on this input "
         "(pandas.errors.EmptyDataError: No columns to parse from file): an empty prediction file"),
        ("X", "S1\t8 31\tDIAGNOSTICO\tzzz\n", NO_VALID.format(1), "codiespX_evaluation.py fails on this input "
         "(ValueError: not enough values to unpack (expected 2, got 0)): no predicted code is valid"),
        ("X", "\n", "the prediction file has no predictions", "codiespX_evaluation.py fails on this input "
         "(pandas.errors.EmptyDataError: No columns to parse from file): an empty prediction file"),
    ],
)  # fmt: skip
def test_no_valid_prediction_is_scored_with_warnings(cli, inputs, track, pred, first_warning, failure):
    """Null where the official scripts print nan (or would, had they not failed), 0 under standard."""
    gold, pred, codes = inputs(GOLD_X if track == "X" else GOLD_D, pred)
    command = ("score", "codiesp", "--track", track, "-g", gold, "-p", pred, "-c", codes)
    official = cli(*command, "--profile", "codiesp2020", "-f", "json")
    assert official.exit_code == 0
    report = json.loads(official.stdout)
    scores = {row["metric"]: row for row in report["scores"]}
    assert (scores["micro"]["tp"], scores["micro"]["fp"]) == (0, 0)
    assert (scores["micro"]["precision"], scores["micro"]["recall"], scores["micro"]["f1"]) == (None, 0.0, None)
    if track != "X":
        assert scores["map"] == {"metric": "map", "documents": 0, "sum": 0.0, "value": None}
    assert first_warning in report["warnings"]
    assert any("null, as the official scripts print nan" in warning for warning in report["warnings"])
    failures = [w for w in report["warnings"] if w.startswith("the official ")]
    assert failures == ([f"the official {failure}; the values here follow its formulas"] if failure else [])
    table = cli(*command, "--profile", "codiesp2020")
    assert table.exit_code == 0
    micro = next(line.split() for line in table.stdout.splitlines() if line.strip().startswith("micro"))
    assert micro[-3:] == ["nan", "0", "nan"]  # as comp_f1_diag_proc.py prints them
    if track != "X":
        assert next(line.split() for line in table.stdout.splitlines() if line.strip().startswith("map")) == [
            "map", "0", "0", "nan"]  # fmt: skip
    assert f"warning: {first_warning}" in table.stderr

    standard = json.loads(cli(*command, "-f", "json").stdout)
    scores = {row["metric"]: row for row in standard["scores"]}
    assert (scores["micro"]["precision"], scores["micro"]["recall"], scores["micro"]["f1"]) == (0.0, 0.0, 0.0)
    if track != "X":
        assert scores["map"] == {"metric": "map", "documents": 2, "sum": 0.0, "value": 0.0}  # S1 and S2 score 0
    assert "micro precision has no predicted code (0/0): reported as 0" + (
        "; every gold document scores 0 in MAP" if track != "X" else "") in standard["warnings"]  # fmt: skip
    assert not any(w.startswith("the official ") for w in standard["warnings"])


@pytest.mark.parametrize("track", ["D", "X"])
@pytest.mark.parametrize("profile", ["standard", "codiesp2020"])
@pytest.mark.parametrize("gold_text", ["", "\n\n"])
def test_an_empty_gold_file_is_a_one_line_error(cli, inputs, track, profile, gold_text):
    gold, pred, codes = inputs(gold_text, PRED_X if track == "X" else PRED_D)
    failed = cli("score", "codiesp", "--track", track, "-g", gold, "-p", pred, "-c", codes, "--profile", profile)
    assert one_line_error(failed) == f"{gold}: the gold holds no codes: there is nothing to score against"


def test_missing_file_unknown_profile_and_track(cli, inputs, tmp_path):
    gold, pred, codes = inputs()
    missing = cli("score", "codiesp", "--track", "D", "-g", gold, "-p", pred, "-c", tmp_path / "nope.tsv")
    assert missing.exit_code == 2 and "nope.tsv: no such file" in missing.stderr
    unknown = cli("score", "codiesp", "--track", "D", "-g", gold, "-p", pred, "-c", codes, "--profile", "trec")
    assert (
        unknown.exit_code == 2 and "unknown profile 'trec' for codiesp; known: codiesp2020, standard" in unknown.stderr
    )
    assert cli("score", "codiesp", "--track", "Q", "-g", gold, "-p", pred, "-c", codes).exit_code == 2


def test_help_names_profiles_and_formats(cli):
    result = cli("score", "codiesp", "--help")
    assert result.exit_code == 0
    for words in ("--track", "--valid-codes", "codiesp2020", "standard", "trec_eval"):
        assert words in result.stdout


def test_profiles_command_lists_the_quirks(cli):
    result = cli("profiles", "codiesp")
    assert result.exit_code == 0
    assert "map_over_predicted = True" in result.stdout and "depth = 1000" in result.stdout


def test_markdown_and_html_show_nan_where_json_has_null(cli, inputs):
    gold, pred, codes = inputs(GOLD_D, "S1\tXXX\n")
    command = ("score", "codiesp", "--track", "D", "-g", gold, "-p", pred, "-c", codes, "--profile", "codiesp2020")
    markdown = cli(*command, "-f", "markdown").stdout
    assert "| map | 0 | 0 | nan |  |  |  |  |  |  |" in markdown
    assert "| micro |  |  |  | 0 | 0 | 3 | nan | 0 | nan |" in markdown
    html = cli(*command, "-f", "html").stdout
    assert html.count(">nan</td>") == 3
