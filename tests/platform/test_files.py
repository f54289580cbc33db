"""File-scored tasks through the queue: a gold registered once, prediction files submitted, scored, rescored."""

from __future__ import annotations

import builtins
import io
import json
import os
import tempfile
from contextlib import contextmanager

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


def directory(path, files: dict[str, str]):
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


def jsonl(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def task_files(task: str, tmp_path) -> tuple[tuple, object, tuple]:
    """A gold and a prediction of ``task`` on disk: the gold's registration arguments, the prediction's path
    and the arguments of ``nlpbench score TASK`` on the same files. relations (brat) and i2b2 (XML) take
    directories, as gold and as predictions."""
    if task == "ner":
        gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
        gold.write_text(GOLD)
        pred.write_text(PRED)
        return ("--file", f"gold={gold}"), pred, ("-g", gold, "-p", pred)
    if task == "coref":
        gold, pred = tmp_path / "key.conll", tmp_path / "response.conll"
        gold.write_text(KEY)
        pred.write_text(RESPONSE)
        return ("--file", f"key={gold}"), pred, ("--key", gold, "--response", pred)
    if task == "timelines":
        files = case_files(tmp_path, case("type_a_vs_type_b_mixture", "strict"))
        register = ("--file", f"gold={files.gold}", "--file", f"all_ids={files.all_ids}", "--option", "mode=strict")
        return (
            register,
            files.pred,
            ("-g", files.gold, "-p", files.pred, "--all-ids", files.all_ids, "--mode", "strict"),
        )
    if task == "codiesp":
        gold, pred, codes = tmp_path / "gold.tsv", tmp_path / "pred.tsv", tmp_path / "codes.tsv"
        gold.write_text(GOLD_D)
        pred.write_text(PRED_D)
        codes.write_text("N39.0\tdesc\nR52\tdesc\nA53.9\tdesc\nBW40ZZZ\tdesc\n")
        register = ("--file", f"gold={gold}", "--file", f"valid_codes={codes}", "--option", "track=D")
        return register, pred, ("--track", "D", "-g", gold, "-p", pred, "-c", codes)
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
        return (
            ("--file", f"gold={gold}", "--option", "gold_format=jsonl"),
            pred,
            ("-g", gold, "-p", pred, "--gold-format", "jsonl"),
        )
    if task == "relations":
        gold = directory(tmp_path / "gold", {"doc1.txt": RELATIONS_TEXT, "doc1.ann": GOLD_ANN})
        pred = directory(tmp_path / "pred", {"doc1.txt": RELATIONS_TEXT, "doc1.ann": PRED_ANN})
        return ("--file", f"gold={gold}"), pred, ("-g", gold, "-p", pred)
    assert task == "i2b2"
    gold = directory(
        tmp_path / "gold", {"100-01.xml": xml(I2B2_TEXT, I2B2_GOLD), "100-02.xml": xml(I2B2_TEXT, I2B2_GOLD[:9])}
    )
    pred = directory(
        tmp_path / "system",
        {"100-01.xml": xml(I2B2_TEXT, I2B2_GOLD[::2]), "100-02.xml": xml(I2B2_TEXT, I2B2_GOLD[3:9])},
    )
    return ("--file", f"gold={gold}"), pred, ("-g", gold, "-p", pred)


@contextmanager
def writing_refused(monkeypatch, tmp_path, db_url: str):
    """Inside the block, opening any file but the store's own (a SQLite store's file and journals) for writing
    (``open``, ``os.open``) or making a folder fails and is recorded, and temporary files would go to an empty
    folder; on leaving, nothing was written there or tried."""
    store_file = db_url.split("///", 1)[1] if db_url.startswith("sqlite") else None
    tried: list[str] = []
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)

    def refused(what: str):
        tried.append(what)
        raise PermissionError(f"a write during scoring: {what}")

    def guarded_open(file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax+"):
            refused(f"open({file!r}, {mode!r})")
        return real_open(file, mode, *args, **kwargs)

    def guarded_os_open(path, flags, *args, **kwargs):
        own = store_file is not None and str(path).startswith(store_file)
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC) and not own:
            refused(f"os.open({path!r})")
        return real_os_open(path, flags, *args, **kwargs)

    real_open, real_os_open = builtins.open, os.open
    with monkeypatch.context() as patched:
        patched.setenv("TMPDIR", str(scratch))
        patched.setattr(tempfile, "tempdir", str(scratch))
        patched.setattr(builtins, "open", guarded_open)
        patched.setattr(io, "open", guarded_open)
        patched.setattr(os, "open", guarded_os_open)
        patched.setattr(os, "mkdir", lambda path, *args, **kwargs: refused(f"os.mkdir({path!r})"))
        yield
    assert tried == []
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("task", ["ner", "coref", "codiesp", "timelines", "linking", "relations", "i2b2"])
def test_file_tasks_are_scored_from_the_store_writing_no_file_as_the_score_command_scores_them(
    cli, nb, db_url, tmp_path, monkeypatch, task
):
    """The worker's scoring and ``rescore`` hand the stored gold and predictions to the task in memory: no file
    is opened for writing, none is made in the temporary folder, and the scores are ``nlpbench score TASK``'s."""
    register, pred, scored = task_files(task, tmp_path)
    direct = cli("score", task, *scored, "-f", "json")
    assert direct.exit_code == 0, direct.stderr
    expected = json.loads(direct.stdout)
    registered = nb("submissions", "gold", task, "set-a", *register)
    assert registered.exit_code == 0, registered.stderr
    submission = submit(nb, "--task", task, "--dataset", "set-a", "--predictions", pred)
    with writing_refused(monkeypatch, tmp_path, db_url):
        run_worker(nb)
    data = shown(nb, submission)
    assert data["status"] == "SCORED", data["reason"]
    assert data["results"][0]["scores"][task] == expected["scores"]
    assert data["results"][0]["perDocumentRows"] == len(expected["per_document"]) > 0
    assert data["results"][0]["warnings"] == expected["warnings"]
    with writing_refused(monkeypatch, tmp_path, db_url):
        rescored = nb("rescore", submission, "--profile", "standard")
    assert rescored.exit_code == 0, rescored.stderr
    assert shown(nb, submission)["results"][0]["scores"][task] == expected["scores"]


@pytest.mark.parametrize("task", ["ner", "i2b2"])
def test_an_unreadable_prediction_is_named_as_it_was_submitted(nb, tmp_path, task):
    """The line of a prediction file (or of a file of a submitted directory) the task cannot read names it
    ``predictions/NAME`` (``predictions/NAME/FILE``), as when scoring wrote it to a folder of that name."""
    register, _, _ = task_files(task, tmp_path)
    if task == "ner":
        pred = tmp_path / "broken.conll"
        pred.write_text("-DOCSTART- O\n\nJohn\n")
        reason = "predictions/broken.conll: line 3: a token line needs a token and a tag, got one field (4 characters)"
    else:
        pred = directory(tmp_path / "broken", {"100-01.xml": "<deIdi2b2><TEXT>no end"})
        reason = "predictions/broken/100-01.xml: malformed XML at line 1, column 22"
    assert nb("submissions", "gold", task, "set-c", *register).exit_code == 0
    submission = submit(nb, "--task", task, "--dataset", "set-c", "--predictions", pred)
    run_worker(nb)
    data = shown(nb, submission)
    assert (data["status"], data["reason"]) == ("INVALID", reason)
