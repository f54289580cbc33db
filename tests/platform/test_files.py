"""File-scored tasks through the queue: a gold registered once, prediction files submitted, scored, rescored."""

from __future__ import annotations

import json

from tests.cli.test_score_ner import GOLD, PRED
from tests.platform.test_worker import run_worker, shown, submit


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
