"""A stored PHI submission's result is what ``nlpbench score sandbox`` gives on the same data exported to files.

The worker scores a prediction file submitted for task ``phi`` and ``rescore`` scores it again under another
profile; the gold and the stored predictions are then exported as NLP Sandbox JSON named as the platform
names its sides (``gold.json``, ``predictions.json``), and the command line scores them: each stored type's
score rows and per-document rows are those of ``-t all``, and the stored warnings those of the five
single-type commands, in order (the worker scores the five types in one pass, yet each type's warnings are
those of scoring it alone).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.platform import document_counts, intervals, moderation, ranks, scoring, stored_rows, views
from nlpbench.platform.overall import OVERALL
from nlpbench.platform.queue import get
from nlpbench.platform.tasks import PHI_TASKS
from nlpbench.store import open_store
from nlpbench.store.intervals import ResultInterval, of_result
from nlpbench.store.submissions import Result, ResultDocument, Submission
from nlpbench.tasks import sandbox
from tests.platform.test_worker import run_worker, shown, submit


def _predictions(gold: list[dict]) -> list[dict]:
    """The gold without every third annotation, and one character shorter copies of the first date and the first
    name kept beside them (a start shared: the ``nlpsandbox`` profile keys instances by start and warns), and the
    first id kept with an ``idType`` outside the schema (odd but valid: the reader warns)."""
    records = [dict(record) for record in gold]
    seen = 0
    for record in records:
        for key in [key for key in record if key.endswith("Annotations")]:
            kept = []
            for annotation in record[key]:
                seen += 1
                if seen % 3:
                    kept.append(annotation)
            record[key] = kept
    for key in ("textDateAnnotations", "textPersonNameAnnotations"):
        first = next(record[key][0] for record in records if record[key])
        first_copy = {**first, "length": first["length"] - 1, "text": first["text"][:-1]}
        next(record for record in records if first in record[key])[key].append(first_copy)
    ids = next(record["textIdAnnotations"] for record in records if record["textIdAnnotations"])
    ids[0] = {**ids[0], "idType": "passport number"}
    return records


def _stored(db_url: str, submission: str, profile: str) -> tuple[dict, dict, list[str]]:
    """The stored result's scores, per-document rows by type (as the command prints them) and warnings."""
    store = open_store(db_url)
    try:
        with store.session(readonly=True) as session:
            query = select(Result).where(Result.submission_id == int(submission), Result.profile == profile)
            result = session.scalars(query).one()
            rows: dict[str, list[dict]] = {}
            kept = select(ResultDocument).where(ResultDocument.result_id == result.id).order_by(ResultDocument.id)
            for row in session.scalars(kept):
                rows.setdefault(row.annotation_type, []).append(
                    {"document": row.document, "metric": row.metric, **row.counts}
                )
            return dict(result.scores), rows, list(result.warnings)
    finally:
        store.close()


def _per_type(rows: list[dict]) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row["annotation_type"], []).append({k: v for k, v in row.items() if k != "annotation_type"})
    return grouped


def _scored_submission(nb, folder, monkeypatch) -> str:
    """A prediction file (:func:`_predictions` of the exported gold) submitted for ``phi`` and scored by the
    worker; the working folder becomes ``folder``, which holds ``gold.json``."""
    monkeypatch.chdir(folder)
    assert nb("dataset", "export", "notes", "gold.json", "--format", "sandbox").exit_code == 0
    submitted = folder / "submitted.json"
    submitted.write_text(json.dumps(_predictions(json.loads((folder / "gold.json").read_text()))))
    submission = submit(nb, "--task", "phi", "--dataset", "notes", "--predictions", submitted)
    run_worker(nb)
    return submission


@contextmanager
def _rescored(nb, db_url: str, folder, monkeypatch, profile: str) -> Iterator[tuple[Session, Submission, Result]]:
    """A submission scored by the worker (:func:`_scored_submission`) and rescored under ``profile``: a read-only
    session of the store, the submission and its result under ``profile``."""
    submission = _scored_submission(nb, folder, monkeypatch)
    assert nb("rescore", submission, "--profile", profile).exit_code == 0
    store = open_store(db_url)
    try:
        with store.session(readonly=True) as session:
            found = get(session, int(submission))
            query = select(Result).where(Result.submission_id == found.id, Result.profile == profile)
            yield session, found, session.scalars(query).one()
    finally:
        store.close()


@pytest.mark.parametrize("profile", ["standard", "nlpsandbox"])
def test_a_stored_result_is_the_commands_report_on_the_exported_files(
    nb, cli, dataset, db_url, tmp_path, monkeypatch, profile
):
    monkeypatch.setattr(sandbox, "BATCH", 16)  # many batches, each handing on the rows of every type
    submission = _scored_submission(nb, tmp_path, monkeypatch)
    assert shown(nb, submission)["status"] == "SCORED"
    if profile != "standard":
        assert nb("rescore", submission, "--profile", profile).exit_code == 0
    store_name = f"submission-{submission}"
    exported = nb(
        "dataset", "export", "notes", "predictions.json", "--format", "sandbox", "--annotation-store", store_name
    )
    assert exported.exit_code == 0, exported.stderr

    def score(*types: str) -> dict:
        args = ["score", "sandbox", "-g", "gold.json", "-p", "predictions.json", "--profile", profile]
        done = cli(*args, *(f"-t{kind}" for kind in types), "--per-document", "--format", "json")
        assert done.exit_code == 0, done.stderr
        return json.loads(done.stdout)

    scores, rows, warnings = _stored(db_url, submission, profile)
    every = score("all")
    assert scores == _per_type(every["scores"]) and rows == _per_type(every["per_document"])
    store = open_store(db_url)
    with store.session(readonly=True) as session:  # what GET /submissions/{id}/documents lists, in its order
        listed = views.per_document(session, int(submission), profile)
    store.close()
    command_rows = [{"type": row.pop("annotation_type"), **row} for row in every["per_document"]]
    assert [(row["type"], row["document"], row["metric"]) for row in listed] == [
        (row["type"], row["document"], row["metric"]) for row in command_rows
    ]
    types = PHI_TASKS["phi"]
    assert set(scores) == set(types)
    expected = [warning for kind in types for warning in score(kind)["warnings"]]
    assert warnings == expected
    assert sum("idType values outside the 1.2.0 schema" in warning for warning in warnings) == 1, warnings
    assert profile == "standard" or any("share a start" in warning for warning in warnings), warnings


@pytest.mark.parametrize("counted", [True, False], ids=["counted", "uncounted"])
@pytest.mark.parametrize("profile", ["standard", "nlpsandbox"])
def test_stored_intervals_are_those_computed_from_the_stored_rows(
    nb, dataset, db_url, tmp_path, monkeypatch, profile, counted
):
    """The worker and ``rescore`` store the rows a few at a time (a batch of 7 here) and compute the intervals
    from count arrays gathered as the rows pass by (:class:`~nlpbench.platform.document_counts.DocumentCounts`);
    the stored intervals are those computed from the stored rows read back as reports, every field exact (each
    type's in the order computed)."""
    monkeypatch.setattr(stored_rows, "ROWS_BATCH", 7)
    if not counted:  # rows that are not plain counts: the intervals come from the stored rows read back
        monkeypatch.setattr(document_counts, "COUNTED", frozenset())
    with _rescored(nb, db_url, tmp_path, monkeypatch, profile) as (session, found, result):
        reports = {kind: scoring.result_report(session, found, result, kind) for kind in result.scores}
        assert sum(len(report.per_document) for report in reports.values()) > 10 * stored_rows.ROWS_BATCH
        expected = [_fields(interval) for interval in intervals.compute(result.id, reports)]
        stored = [_fields(interval) for interval in of_result(session, result.id)]
    by_type = lambda rows: sorted(rows, key=lambda row: row[0])  # noqa: E731 (PostgreSQL's JSONB orders the types)
    assert by_type(stored) == by_type(expected)
    assert {row[0] for row in stored} == {*PHI_TASKS["phi"], OVERALL}


@pytest.mark.parametrize("profile", ["standard", "nlpsandbox"])
def test_what_ranking_is_handed_is_what_it_reads_from_the_stored_rows(
    nb, dataset, db_url, tmp_path, monkeypatch, profile
):
    """The worker and ``rescore`` hand ranking each type's primary value's derivation from the counts it stored the
    intervals from (:attr:`~nlpbench.platform.scoring.Scored.derived`), instead of its reading them back: they are
    what :func:`~nlpbench.platform.scoring.result_derivation` reads from the stored rows, documents in order and
    every count."""
    monkeypatch.setattr(stored_rows, "ROWS_BATCH", 7)
    handed: list[dict] = []
    ranked = ranks.rank
    monkeypatch.setattr(ranks, "rank", lambda session, task, ready=None, derived=None: (
        handed.append(dict(derived or {})), ranked(session, task, ready, derived))[1])  # fmt: skip
    with _rescored(nb, db_url, tmp_path, monkeypatch, profile) as (session, found, result):
        assert len(handed) == 2  # the worker's result, then rescore's
        derived = handed[-1]
        assert {key[1] for key in derived} == {*PHI_TASKS["phi"], OVERALL}
        for (result_id, kind, metric, field), given in derived.items():
            assert result_id == result.id and (metric, field) == ("token", "f1")
            read = scoring.result_derivation(session, found, result, kind, metric, field)
            assert read is not None
            assert (given.metric, given.field, given.statistic) == (read.metric, read.field, read.statistic)
            assert given.documents == read.documents
            assert given.counts.dtype == read.counts.dtype and np.array_equal(given.counts, read.counts)


def _fields(interval: ResultInterval) -> tuple:
    """An interval row's every field but its ids."""
    return tuple(getattr(interval, name) for name in ("annotation_type", "metric", "field", "ranked", "value",
                                                      "estimate", "low", "high", "confidence", "method",
                                                      "resamples", "documents"))  # fmt: skip


@pytest.mark.parametrize("replace", ["rescore", "restart"])
def test_a_deleted_result_takes_the_rank_groups_that_compare_it_with_it(
    nb, dataset, db_url, tmp_path, monkeypatch, replace
):
    """SQLite gives a new row the largest id plus one: a result stored after the newest one is deleted takes its id,
    and groups ranked with the deleted one would pass for the new one's (a rescore whose values changed kept the
    old ranks)."""
    submission = _scored_submission(nb, tmp_path, monkeypatch)
    store = open_store(db_url)
    try:
        with store.session() as session:
            found = get(session, int(submission))
            (result,) = session.scalars(select(Result).where(Result.submission_id == found.id))
            deleted = str(result.id)

            def ranking_it() -> int:
                return sum(deleted in row.ranks for row in session.scalars(ranks.stored(found.task)))

            assert ranking_it() > 0
            if replace == "rescore":
                replaced = scoring.new_result(session, found, result.profile)
                assert str(replaced.id) == deleted or store.dialect == "postgresql"  # the id taken again
            else:
                moderation.restart(session, found)
            assert ranking_it() == 0
    finally:
        store.close()
