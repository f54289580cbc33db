"""``nlpbench score timelines`` and ``nlpbench convert --from timelines-tsv``: output contract, errors, help."""

from __future__ import annotations

import json

import pytest

from tests.tasks.timeline_cases import case, case_files, write_files


def score_args(files, *extra: str) -> list:
    args = ["score", "timelines", "--gold", files.gold, "--pred", files.pred, "--all-ids", files.all_ids]
    return args + (["--gold-ids", files.gold_ids] if files.gold_ids else []) + list(extra)


def test_json_follows_the_output_contract(cli, tmp_path):
    files = case_files(tmp_path, case("type_a_vs_type_b_mixture", "strict"))
    args = score_args(files, "--mode", "strict", "--profile", "chemotimelines2024", "--reference-date", "2026-11-21")
    result = cli(*args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report) == ["task", "profile", "inputs", "scores", "per_document", "warnings"]
    assert (report["task"], report["profile"]) == ("timelines", "chemotimelines2024")
    assert report["inputs"] == {
        "gold": str(files.gold), "pred": str(files.pred), "all_ids": str(files.all_ids), "gold_ids": None,
        "mode": "strict", "reference_date": "2026-11-21",
        "patients": {"ids": 4, "gold": 4, "predicted": 4, "scored": 4},
    }  # fmt: skip
    assert report["scores"] == [
        {"metric": "micro", "tp": 1, "fp": 1, "fn": 2, "precision": 0.5, "recall": 0.3333333333333333, "f1": 0.4},
        {"metric": "type_a", "patients": 4, "precision": 0.5, "recall": 0.375, "f1": 0.41666666666666663},
        {"metric": "type_b", "patients": 2, "precision": 0.5, "recall": 0.25, "f1": 0.3333333333333333},
        {"metric": "official", "f1": 0.375},
    ]  # eval_timeline.py printed these, to the last digit
    assert report["per_document"][0] == {
        "document": "p1", "metric": "patient", "gold": 2, "tp": 1, "fp": 0, "fn": 1,
        "precision": 1.0, "recall": 0.5, "f1": 0.6666666666666666,
    }  # fmt: skip
    assert [row["document"] for row in report["per_document"]] == ["p1", "p2", "p3", "p4"]
    assert cli(*args, "--format", "json").stdout == result.stdout  # same input, same bytes


@pytest.mark.parametrize("mode", ["strict", "day", "month", "year"])
def test_every_mode_has_the_official_row(cli, tmp_path, mode):
    files = case_files(tmp_path, case("label_relaxation", "month"))
    for profile in ("chemotimelines2024", "standard"):
        scores = json.loads(cli(*score_args(files, "--mode", mode, "--profile", profile, "-f", "json")).stdout)[
            "scores"
        ]
        rows = {row["metric"]: row for row in scores}
        assert list(rows) == ["micro", "type_a", "type_b", "official"]
        assert rows["official"]["f1"] == pytest.approx((rows["type_a"]["f1"] + rows["type_b"]["f1"]) / 2)
    quirks = cli("profiles", "timelines").stdout
    assert "v20240305 (fdcf3fc, 2024-03-05)', 'month'" in quirks and "a7cf6f7 (2024-10-01)', 'strict'" in quirks


def test_the_table_shows_the_scores(cli, tmp_path):
    files = case_files(tmp_path, case("duplicates_in_pred_and_gold", "day"))
    result = cli(*score_args(files, "--mode", "day"))
    assert result.exit_code == 0
    assert "timelines · profile standard" in result.stdout
    assert "type_b" in result.stdout and "0.5714" in result.stdout


def test_warnings_go_to_standard_error(cli, tmp_path):
    files = case_files(tmp_path, case("crash_nothing_predicted", "strict"))
    result = cli(*score_args(files, "--mode", "strict", "--profile", "chemotimelines2024", "-f", "json"))
    assert result.exit_code == 0
    assert result.stderr == (
        "warning: no scored patient has a true or false positive: micro precision is 0/0, reported as 0 "
        "(eval_timeline.py stops with ZeroDivisionError here)\n"
    )


@pytest.mark.parametrize(
    ("name", "where", "message"),
    [
        ("crash_season_in_gold", "gold.json", "patient p1: date '2013-SU': eval_timeline.py cannot read it"),
        ("crash_week_with_day", "gold.json", "patient p1: date '2013-W05-3': eval_timeline.py cannot read it"),
        ("crash_all_ids_count_mismatch_pred", "all_ids.txt", "3 ids, but the predictions hold 2 patients"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, tmp_path, name, where, message):
    files = case_files(tmp_path, case(name, "strict"))
    result = cli(*score_args(files, "--mode", "strict", "--profile", "chemotimelines2024"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"nlpbench: error: {tmp_path / where}: {message}")
    assert result.stderr.count("\n") == 1


def test_file_and_option_errors(cli, tmp_path):
    files = write_files(tmp_path, {"p1": []}, {"p1": []}, ["p1"])
    missing = cli("score", "timelines", "--gold", tmp_path / "nope.json", "--pred", files.pred, "--all-ids",
                  files.all_ids, "--mode", "strict")  # fmt: skip
    assert missing.exit_code == 2 and "nope.json: no such file" in missing.stderr
    assert cli(*score_args(files)).exit_code == 2  # --mode is required
    assert cli(*score_args(files, "--mode", "week")).exit_code == 2
    assert cli(*score_args(files, "--mode", "day", "--reference-date", "21/11/2026")).exit_code == 2
    unknown = cli(*score_args(files, "--mode", "day", "--profile", "i2b2"))
    assert unknown.exit_code == 2 and "unknown profile 'i2b2' for timelines" in unknown.stderr
    files.pred.write_text('{"p1": [["taxol", "contains-1", 2013]]}')
    bad = cli(*score_args(files, "--mode", "strict"))
    assert bad.stderr == (
        f'nlpbench: error: {files.pred}: patient p1, tuple 0: ["taxol", "contains-1", 2013] is not '
        "[chemo, label, date] of three strings\n"
    )


def test_help_names_modes_profiles_and_the_reference_date(cli):
    text = cli("score", "timelines", "--help").stdout
    for word in ("--mode", "--all-ids", "--gold-ids", "--reference-date", "chemotimelines2024", "standard"):
        assert word in text


def test_convert_system_tsv_into_timelines(cli, tmp_path):
    header = "DCT\tpatient_id\tchemo_text\tchemo_annotation_id\tnormed_timex\ttimex_annotation_id\ttlink\tnote_name\t"
    source = tmp_path / "system.tsv"
    source.write_text(
        header + "tlink_inst\n"
        "2013-05-20\tptA\tTaxol\t1@e@ptA_n1@system\t2013-05-12\t2@e@ptA_n1@system\tcontains-1\tptA_n1\tx\n"
        "2013-05-20\tptA\ttaxol\t3@e@ptA_n2@system\t2013-05-12\t4@e@ptA_n2@system\tbegins-on\tptA_n2\tx\n"
        "2014-01-01\tptB\tnone\tnone\tnone\tnone\tnone\tptB_n1\tnone\n"
    )
    result = cli("convert", "--from", "timelines-tsv", "--to", "timelines", source, tmp_path / "system.json")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{tmp_path / 'system.json'}: wrote 2 patients, 1 timeline tuples\n"
    assert "left out as the summariser does" in result.stderr
    assert json.loads((tmp_path / "system.json").read_text()) == {
        "ptA": [["taxol", "begins-on", "2013-05-12"]],
        "ptB": [],
    }
    ids = tmp_path / "ids.txt"
    ids.write_text("ptA\nptB\n")
    scored = cli("score", "timelines", "--gold", tmp_path / "system.json", "--pred", tmp_path / "system.json",
                 "--all-ids", ids, "--mode", "strict", "-f", "json")  # fmt: skip
    assert json.loads(scored.stdout)["scores"][0]["f1"] == 1.0


def test_convert_errors(cli, tmp_path):
    source = tmp_path / "system.tsv"
    source.write_text(
        "DCT\tpatient_id\tchemo_text\tchemo_annotation_id\tnormed_timex\ttimex_annotation_id\ttlink\tnote_name\n"
        "2013\tptA\tTaxol\t1@e@ptA_n1@system\t2013-05-12\t2@e@ptA_n1@system\tcontains-1\tptA_n1\n"
        "2013\tptA\tTaxol\t1@e@ptA_n1@system\t2013-05-12\t2@e@ptA_n1@system\toverlap\tptA_n1\n"
    )
    conflict = cli("convert", "--from", "timelines-tsv", "--to", "timelines", source, tmp_path / "out.json")
    assert conflict.exit_code == 2 and conflict.stderr.count("\n") == 1
    assert conflict.stderr.startswith(f"nlpbench: error: {source}: patient ptA: taxol on 2013-05-12 has the labels")
    unwritable = cli("convert", "--from", "timelines", "--to", "timelines-tsv", source, tmp_path / "out.tsv")
    assert unwritable.exit_code == 2 and "does not write it" in unwritable.stderr
    mixed = cli("convert", "--from", "brat", "--to", "timelines", source, tmp_path / "out.json")
    assert mixed.exit_code == 2 and "unknown timeline format 'brat'" in mixed.stderr


def test_formats_profiles_and_convert_help_list_timelines(cli):
    listing = cli("formats").stdout
    assert "timelines-tsv" in listing and "ChemoTimelines JSON" in listing
    quirks = cli("profiles", "timelines").stdout
    assert "chemotimelines2024" in quirks and "script_arithmetic" in quirks and "official_mode" in quirks
    assert "timelines-tsv" in cli("convert", "--help").stdout
