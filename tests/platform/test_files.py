"""File-scored tasks through the queue: a gold registered once, prediction files submitted, scored, rescored."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_score_codiesp import GOLD_D, PRED_D
from tests.cli.test_score_coref import KEY, RESPONSE
from tests.cli.test_score_ner import GOLD, PRED
from tests.cli.test_score_relations import GOLD_ANN, PRED_ANN
from tests.cli.test_score_relations import TEXT as RELATIONS_TEXT
from tests.conformance.i2b2_cases import GOLD as I2B2_GOLD
from tests.conformance.i2b2_cases import TEXT as I2B2_TEXT
from tests.conformance.i2b2_cases import xml
from tests.platform.test_worker import run_worker, shown, submit
from tests.tasks.timeline_cases import case, case_files


def test_ner_predictions_are_scored_against_the_registered_gold_with_per_document_counts(cli, nb, tmp_path):
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    gold.write_text(GOLD)
    pred.write_text(PRED)
    registered = nb(
        "submissions", "gold", "ner", "conll-demo", "--file", f"gold={gold}", "--option", "pred_format=conll"
    )
    assert registered.exit_code == 0, registered.stderr
    assert registered.stdout.startswith("gold of ner for conll-demo@1: 1 files, sha256 ")
    direct = json.loads(cli("score", "ner", "--gold", gold, "--pred", pred, "--format", "json").stdout)
    submission = submit(nb, "--task", "ner", "--dataset", "conll-demo", "--predictions", pred)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert [e["status"] for e in data["events"]] == ["RECEIVED", "VALIDATING", "SCORING", "SCORED"]
    (result,) = data["results"]
    assert result["scores"]["ner"] == direct["scores"]  # the same numbers as `nlpbench score ner`
    assert result["perDocumentRows"] == len(direct["per_document"])
    assert result["reproducibility"]["dataset"]["name"] == "conll-demo"
    assert len(result["reproducibility"]["predictionsSha256"]) == 64
    rescored = nb("rescore", submission, "--profile", "nervaluate")
    assert rescored.exit_code == 0, rescored.stderr


def test_an_unreadable_prediction_file_is_invalid_with_one_line(nb, tmp_path):
    gold, pred = tmp_path / "gold.conll", tmp_path / "broken.conll"
    gold.write_text(GOLD)
    pred.write_text("-DOCSTART- O\n\nJohn B-PER extra columns here\n")
    assert nb("submissions", "gold", "ner", "conll-demo", "--file", f"gold={gold}").exit_code == 0
    submission = submit(nb, "--task", "ner", "--dataset", "conll-demo", "--predictions", pred)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "INVALID", data["reason"]
    assert "broken.conll" in data["reason"] and "\n" not in data["reason"]
    missing = nb("submit", "--team", "t", "--task", "ner", "--dataset", "other", "--predictions", pred)
    assert missing.exit_code == 2 and "no gold of task ner for dataset other: register one first" in missing.stderr


@pytest.mark.parametrize("task", ["coref", "codiesp", "timelines"])
def test_other_file_tasks_score_through_the_queue_as_the_score_command_does(cli, nb, tmp_path, task):
    if task == "coref":
        gold, pred = tmp_path / "key.conll", tmp_path / "response.conll"
        gold.write_text(KEY)
        pred.write_text(RESPONSE)
        register = ("--file", f"key={gold}")
        direct = cli("score", "coref", "--key", gold, "--response", pred, "--format", "json")
    elif task == "timelines":
        files = case_files(tmp_path, case("type_a_vs_type_b_mixture", "strict"))
        pred = files.pred
        register = ("--file", f"gold={files.gold}", "--file", f"all_ids={files.all_ids}", "--option", "mode=strict")
        direct = cli(
            "score",
            "timelines",
            "--gold",
            files.gold,
            "--pred",
            pred,
            "--all-ids",
            files.all_ids,
            "--mode",
            "strict",
            "-f",
            "json",
        )
    else:
        gold, pred, codes = tmp_path / "gold.tsv", tmp_path / "pred.tsv", tmp_path / "codes.tsv"
        gold.write_text(GOLD_D)
        pred.write_text(PRED_D)
        codes.write_text("N39.0\tdesc\nR52\tdesc\nA53.9\tdesc\nBW40ZZZ\tdesc\n")
        register = ("--file", f"gold={gold}", "--file", f"valid_codes={codes}", "--option", "track=D")
        direct = cli("score", "codiesp", "--track", "D", "-g", gold, "-p", pred, "-c", codes, "--format", "json")
    assert nb("submissions", "gold", task, "set-a", *register).exit_code == 0
    submission = submit(nb, "--task", task, "--dataset", "set-a", "--predictions", pred)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    expected = json.loads(direct.stdout)
    assert data["results"][0]["scores"][task] == expected["scores"]
    assert data["results"][0]["perDocumentRows"] == len(expected["per_document"]) > 0


def directory(path, files: dict[str, str]):
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


def jsonl(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("task", ["linking", "relations", "i2b2"])
def test_linking_relations_and_i2b2_directories_score_as_the_score_command_does(cli, nb, tmp_path, task):
    """relations (brat) and i2b2 (XML) take directories, as gold and as predictions; linking a JSONL file."""
    if task == "linking":
        gold = jsonl(
            tmp_path / "gold.jsonl",
            {"id": "d1", "entities": [{"mention": "MY DOG", "qid": "rex"}, {"mention": "CAT", "qid": "cat"}]},
            {"id": "d2", "entities": [{"mention": "ROBIN", "qid": "robin"}]},
        )
        pred = jsonl(
            tmp_path / "pred.jsonl",
            {"id": "d1", "entities": [{"mention": "my dog", "qid": "rex"}, {"mention": "cat", "qid": "dog"}]},
            {"id": "d2", "entities": [{"mention": "robin", "qid": "robin"}]},
        )
        register, extra = ("--option", "gold_format=jsonl"), ("--gold-format", "jsonl")
    elif task == "relations":
        gold = directory(tmp_path / "gold", {"doc1.txt": RELATIONS_TEXT, "doc1.ann": GOLD_ANN})
        pred = directory(tmp_path / "pred", {"doc1.txt": RELATIONS_TEXT, "doc1.ann": PRED_ANN})
        register, extra = (), ()
    else:
        gold = directory(
            tmp_path / "gold",
            {"100-01.xml": xml(I2B2_TEXT, I2B2_GOLD), "100-02.xml": xml(I2B2_TEXT, I2B2_GOLD[:9])},
        )
        pred = directory(
            tmp_path / "system",
            {"100-01.xml": xml(I2B2_TEXT, I2B2_GOLD[::2]), "100-02.xml": xml(I2B2_TEXT, I2B2_GOLD[3:9])},
        )
        register, extra = (), ()
    direct = cli("score", task, "-g", gold, "-p", pred, *extra, "-f", "json")
    assert direct.exit_code == 0, direct.stderr
    registered = nb("submissions", "gold", task, "set-b", "--file", f"gold={gold}", *register)
    assert registered.exit_code == 0, registered.stderr
    submission = submit(nb, "--task", task, "--dataset", "set-b", "--predictions", pred)
    run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    expected = json.loads(direct.stdout)
    assert data["results"][0]["scores"][task] == expected["scores"]
    assert data["results"][0]["perDocumentRows"] == len(expected["per_document"]) > 0
