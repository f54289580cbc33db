"""Score a submission's stored predictions into a stored result: score rows and per-document counts.

Scoring reads the store and hands the task what it read, in memory: no file
is written. A PHI task hands the dataset's gold standard and the submission's
annotation store ``submission-<id>`` to the registered ``sandbox`` task as
documents read from the store (checked and merged as the NLP Sandbox JSON
reader does, :class:`StoredSide`) and scores each of its annotation types, the
mentions an LLM tool could not place charged as false positives of their type
(:func:`nlpbench.platform.accounts.charge_unplaced`); the
``deid`` task hands its registered task the dataset's notes and gold standard
as documents, and the submission's stored de-identified notes as the JSON lines
file ``deidentified.jsonl`` it reads, in memory; a file-scored task hands its
registered task's ``score(gold, pred, *, profile, **options)`` its registered
gold files and the submitted file as the files they were, in memory
(:func:`nlpbench.platform.submitted.in_memory`, read by the same readers as a
path on disk: :class:`nlpbench.files.MemoryPath`), named in messages
``gold/ARGUMENT/NAME`` and ``predictions/NAME``. Either way the Report's
``per_document`` rows — the counts of each document under each metric — are
stored, one row per document, metric and annotation type, so that
leaderboards, intervals and re-scoring derive from them (a PHI task's as its
pass scores them, a batch at a time, into a result made beforehand:
:func:`new_result`, :mod:`nlpbench.platform.stored_rows`); the result's
bootstrap intervals (:mod:`nlpbench.platform.intervals`) are computed from the
same rows' counts and stored in the same transaction. Each result records what makes
it reproducible (:func:`reproducibility`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Select, delete, select
from sqlalchemy.orm import Session

from nlpbench import profiles
from nlpbench.files import MemoryPath
from nlpbench.model import Document
from nlpbench.platform import accounts, at_sites, intervals, tasks
from nlpbench.platform.document_counts import DocumentCounts
from nlpbench.platform.errors import Conflict
from nlpbench.platform.golds import find_gold
from nlpbench.platform.overall import OVERALL, applies, overall_report
from nlpbench.platform.queue import get, submission_deid_steps
from nlpbench.platform.stored_rows import StoredRows, insert_rows
from nlpbench.platform.submitted import in_memory
from nlpbench.profiles.spans import SpanProfile
from nlpbench.report.model import Report, Row
from nlpbench.stats.report import Derivation, derivations, sources
from nlpbench.store import Store, repository
from nlpbench.store.intervals import ResultInterval, of_result
from nlpbench.store.ranks import forget_results
from nlpbench.store.submissions import SCORED, DeidentifiedNote, Result, ResultDocument, Submission
from nlpbench.tasks import InMemory
from nlpbench.version import __version__

#: The folder a file-scored task's submitted predictions are named in (``predictions/NAME``).
PREDICTIONS_FOLDER = "predictions"
#: The name of a ``deid`` submission's stored de-identified notes, as the JSON lines its task reads.
DEIDENTIFIED_NOTES = "deidentified.jsonl"
#: The name of its queue's de-identification steps, as the ``config`` file its task reads.
DEID_STEPS = "deid-steps.json"


@dataclass
class Scored:
    """Score rows per annotation type (the task's name for file-scored tasks), per-document rows, warnings."""

    scores: dict[str, list[Row]] = field(default_factory=dict)
    per_document: list[tuple[str, Row]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The per-document rows when they were stored as they were scored (``per_document`` is then empty).
    streamed: StoredRows | None = None
    #: Once stored from counts (:func:`store_result`): each annotation type's primary value's derivation, by the key
    #: ranking reads it under (:class:`nlpbench.platform.ranks.Shared`), so that it is not read back from the rows.
    derived: dict[tuple[int, str, str, str], Derivation] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        """How many per-document rows."""
        return self.streamed.inserted if self.streamed is not None else len(self.per_document)

    def add(self, annotation_type: str, report: Report) -> None:
        """Add a report's rows and warnings under ``annotation_type``."""
        self.scores[annotation_type] = report.scores
        self.per_document.extend((annotation_type, row) for row in report.per_document)
        self.warnings.extend(report.warnings)


def predictions_store(submission_id: int) -> str:
    """The annotation store that holds a submission's predictions."""
    return f"submission-{submission_id}"


def score(session: Session, submission: Submission, profile: str, into: Result | None = None) -> Scored:
    """Score the submission's stored predictions under ``profile``, writing no file; bad predictions raise
    :class:`~nlpbench.errors.InputError`, naming its file as it is named in memory (``predictions/NAME``,
    ``gold/ARGUMENT/NAME``, :data:`DEIDENTIFIED_NOTES`), or, for a PHI task, by the name of its side
    (``gold.json``, ``predictions.json``). ``into`` (a result :func:`new_result` made): a PHI task's per-document
    rows are stored into it a batch at a time as they are scored (:class:`StoredRows`), not held."""
    if tasks.is_phi(submission.task):
        return _score_phi(session, submission, profile, into)
    if tasks.is_deid(submission.task):
        return _score_deid(session, submission, profile)
    return _score_files(session, submission, profile)


@dataclass
class StoredSide:
    """An annotation store of a dataset as the ``sandbox`` task reads a file of NLP Sandbox JSON: each note's
    record, checked and merged by that reader (:func:`nlpbench.formats.sandbox.read_records`, annotations as
    columns), named ``name`` in messages. Every annotation the store holds came from an NLP Sandbox array, so
    none is left out.

    The records stream from the store a batch of notes at a time, each as the data node serves it
    (:func:`nlpbench.formats.sandbox.raw_record`), its arrays left as the JSON text the store keeps, which
    the reader decodes straight into columns as it does a file's; the reader's count of records per note
    reads the notes' ids alone.
    """

    session: Session
    dataset: str
    store: str
    name: str

    def __str__(self) -> str:
        return self.name

    def read(self, labels: Collection[str] | None = None) -> Iterator[Document]:
        from nlpbench.formats import sandbox

        yield from sandbox.read_records(self.records, self.name, labels, columns=True, names=self.names)

    def records(self) -> Iterator[dict[str, Any]]:
        """The store's records, one per note and record, in note id order (:func:`repository.records_json`)."""
        from nlpbench.formats import sandbox

        for note, arrays in repository.records_json(self.session, self.dataset, self.store):
            yield sandbox.raw_record(note, arrays)

    def names(self) -> Iterator[str]:
        """Each record's resource name (its note's id), in the order of :meth:`records`."""
        for note, _ in repository.records_json(self.session, self.dataset, self.store, arrays=False):
            yield note


def _score_phi(session: Session, submission: Submission, profile: str, into: Result | None) -> Scored:
    """Score every type of a PHI task in one pass over the gold and the stored predictions, each type's rows
    and warnings those of scoring that type alone (:func:`nlpbench.tasks.sandbox.score_types`); ``into``: the
    rows stored into that result as they are scored, each charged its note's unplaced mentions as it passes."""
    from nlpbench.tasks.sandbox import score_types

    dataset = submission.dataset
    gold = StoredSide(session, dataset, repository.GOLDSTANDARD, "gold.json")
    pred = StoredSide(session, dataset, predictions_store(submission.id), "predictions.json")
    invented = accounts.unplaced(session, submission.id)
    rules = cast(SpanProfile, profiles.get("spans", profile))
    streamed = StoredRows(session, into.id, invented) if into is not None else None
    scored = Scored(streamed=streamed)
    types = tasks.PHI_TASKS[submission.task]
    for label, report in score_types(gold, pred, types, profile=profile, rows=streamed).items():
        documents = streamed.counts.documents.get(label, {}) if streamed is not None else None
        accounts.charge_unplaced(report, label, invented.get(label, {}), rules, documents)
        scored.add(label, report)
    return scored


def _score_deid(session: Session, submission: Submission, profile: str) -> Scored:
    """Score a ``deid`` submission's de-identified notes against the dataset's notes and gold standard,
    read from the store, under the steps it ran with; the notes and the steps are handed to the task as
    the JSON it reads, in memory."""
    gold = InMemory(tuple(repository.documents(session, submission.dataset, repository.GOLDSTANDARD)))
    stored = session.execute(
        select(DeidentifiedNote.note_identifier, DeidentifiedNote.text)
        .where(DeidentifiedNote.submission_id == submission.id)
        .order_by(DeidentifiedNote.id)
    )
    lines = "".join(
        json.dumps({"noteId": identifier, "text": text}, ensure_ascii=False) + "\n" for identifier, text in stored
    )
    pred = MemoryPath.file(DEIDENTIFIED_NOTES, lines)
    config = MemoryPath.file(DEID_STEPS, json.dumps(list(submission_deid_steps(submission))))
    scored = Scored()
    scored.add(submission.task, tasks.spec(submission.task).score(gold, pred, profile=profile, config=config))
    return scored


def _score_files(session: Session, submission: Submission, profile: str) -> Scored:
    """Score a file-scored submission: its task's gold files, as registered, and the submitted file, in memory."""
    spec = tasks.spec(submission.task)
    gold = find_gold(session, submission.task, submission.dataset, submission.dataset_version)
    assert gold is not None  # a task scored from files is submitted only when its gold is stored
    arguments: dict[str, Any] = dict(gold.options)
    for argument, (name, text) in gold.files.items():
        given = in_memory(name, text, f"gold/{argument}")
        arguments[argument] = [given] if argument in spec.lists else given
    pred = in_memory(submission.predictions_name, submission.predictions or "", PREDICTIONS_FOLDER)
    scored = Scored()
    scored.add(submission.task, spec.score(arguments.pop(spec.sides[0]), pred, profile=profile, **arguments))
    return scored


def reproducibility(session: Session, submission: Submission, profile: str) -> dict[str, Any]:
    """What a result was computed from: the tool, its command or image, the data, the profile (and a ``deid``
    result's de-identification steps), nlpbench."""
    if tasks.on_dataset(submission.task):
        row = repository.get_dataset(session, submission.dataset)
        dataset = {
            "name": row.name,
            "version": row.version,
            "contentHash": repository.content_hash(session, submission.dataset),
        }
    else:
        gold = find_gold(session, submission.task, submission.dataset, submission.dataset_version)
        assert gold is not None  # a task scored from files is submitted only when its gold is stored
        dataset = {"name": gold.dataset, "version": gold.version, "contentHash": gold.content_hash}
    tool = submission.tool_meta or {}
    return {
        "task": submission.task,
        "kind": submission.kind,
        "tool": {key: tool.get(key) for key in ("name", "version", "license", "url", "apiVersion", "type")}
        if tool
        else None,
        "toolUrl": submission.tool_url,
        "model": submission.model,
        "template": submission.template,
        "commandSha256": sha256_of(submission.command),
        "image": submission.image,
        "predictionsSha256": sha256_of(submission.predictions),
        "dataset": dataset,
        "profile": profile,
        **({"deidSteps": list(submission_deid_steps(submission))} if tasks.is_deid(submission.task) else {}),
        "nlpbench": __version__,
    }


def sha256_of(value: str | None) -> str | None:
    """The SHA-256 of ``value``'s UTF-8 (lone surrogates kept), in hexadecimal; None for None."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest() if value is not None else None


def delete_results(session: Session, submission: Submission, profile: str | None = None) -> None:
    """Delete the submission's results (under ``profile``, else all), their rows and intervals (foreign keys
    cascade) and the stored rank groups of every column that compares one (:func:`forget_results`)."""
    query = select(Result.id).where(Result.submission_id == submission.id)
    if profile is not None:
        query = query.where(Result.profile == profile)
    deleted = list(session.scalars(query))
    if deleted:
        forget_results(session, submission.task, deleted)
        session.execute(delete(Result).where(Result.id.in_(deleted)))


def new_result(
    session: Session, submission: Submission, profile: str, reproduced: dict[str, Any] | None = None
) -> Result:
    """Replace the submission's result under ``profile`` with an empty one, to be filled by :func:`store_result`.

    The replaced result's per-document rows and intervals go with it (their foreign keys cascade). ``reproduced``:
    its reproducibility fields, when not those of this store's data (:func:`reproducibility`)."""
    delete_results(session, submission, profile)
    result = Result(
        submission_id=submission.id,
        profile=profile,
        scores={},
        reproducibility=reproduced if reproduced is not None else reproducibility(session, submission, profile),
        warnings=[],
    )
    session.add(result)
    session.flush()
    return result


def store_result(
    session: Session,
    submission: Submission,
    profile: str,
    scored: Scored,
    *,
    into: Result | None = None,
    reproduced: dict[str, Any] | None = None,
    by_site: bool = False,
) -> Result:
    """Store ``scored`` as the submission's result under ``profile``, per-document rows and intervals included.

    ``into``: the result :func:`new_result` made for it (its rows already stored if they were scored into it);
    otherwise the result under ``profile`` is replaced (:func:`new_result`, ``reproduced``). ``by_site``: the
    documents are several sites' (``SITE/…``), resampled within each (:func:`nlpbench.platform.intervals.compute`).
    The intervals are computed from the rows' counts (:func:`nlpbench.platform.intervals.compute_counted`) when
    they are PHI counts, else from the rows.
    """
    result = into if into is not None else new_result(session, submission, profile, reproduced)
    result.scores, result.warnings = scored.scores, scored.warnings
    if scored.streamed is not None:
        counts = scored.streamed.counts
    else:
        counts = DocumentCounts()
        insert_rows(session, result.id, counts.passing(scored.per_document))
    if counts.complete:
        ranked: dict[str, Derivation] = {}
        found = intervals.compute_counted(
            result.id, submission.task, profile, scored.scores, counts, by_site=by_site, ranked=ranked
        )
        scored.derived = {(result.id, kind, d.metric, d.field): d for kind, d in ranked.items()}
    else:
        if scored.streamed is not None:  # rows that are not plain counts, held by the store alone: read back
            reports = {kind: result_report(session, submission, result, kind) for kind in scored.scores}
        else:
            typed: dict[str, list[Row]] = {}  # the scored rows themselves: as the stored rows read back, unpacked
            for annotation_type, row in scored.per_document:
                typed.setdefault(annotation_type, []).append(row)
            reports = {
                annotation_type: Report(submission.task, profile, {}, score_rows, typed.get(annotation_type, []))
                for annotation_type, score_rows in scored.scores.items()
            }
        found = intervals.compute(result.id, reports, by_site=by_site)
    session.add_all(found)
    session.flush()
    return result


def rescore(store: Store, submission_id: int, profile: str) -> int:
    """Score a SCORED submission's stored predictions again under ``profile``, and rank the task's columns the
    new result changes (:func:`nlpbench.platform.ranks.rank`), in one transaction; the number of per-document rows."""
    with store.session() as session:
        submission = get(session, submission_id)
        if submission.status != SCORED:
            raise Conflict(f"submission {submission_id} is {submission.status}: only SCORED submissions are rescored")
        if at_sites.runs_of(session, submission_id):
            raise Conflict(
                f"submission {submission_id} was run at data sites: this store holds their counts, not its "
                "predictions, so it cannot be scored again here"
            )
        result = new_result(session, submission, profile)
        scored = score(session, submission, profile, into=result)
        store_result(session, submission, profile, scored, into=result)
        from nlpbench.platform import ranks  # ranks reads results through this module

        ranks.rank(session, submission.task, derived=scored.derived)
        return scored.rows


def result_report(session: Session, submission: Submission, result: Result, annotation_type: str) -> Report:
    """The report of one annotation type of a stored result: its score rows and per-document rows; for
    :data:`~nlpbench.platform.overall.OVERALL`, the overall report of its types."""
    if annotation_type == OVERALL and annotation_type not in result.scores:
        return overall_report({kind: result_report(session, submission, result, kind) for kind in result.scores})
    rows = session.scalars(
        select(ResultDocument)
        .where(ResultDocument.result_id == result.id, ResultDocument.annotation_type == annotation_type)
        .order_by(ResultDocument.id)
    )
    stored = [{"document": row.document, "metric": row.metric, "counts": row.counts} for row in rows]
    return _report(submission.task, result.profile, result.scores[annotation_type], stored)


def result_derivation(
    session: Session, submission: Submission, result: Result, annotation_type: str, metric: str, field: str
) -> Derivation | None:
    """The first derivation of the overall value ``(metric, field)`` of one annotation type of a stored result,
    as :func:`~nlpbench.stats.report.derivations` of its :func:`result_report` gives it (None: its per-document
    rows do not determine it), reading only what that value needs: the type's documents in the order stored,
    and the counts of the metrics it is derived from (:func:`~nlpbench.stats.report.sources`), as plain rows.

    :data:`~nlpbench.platform.overall.OVERALL`'s documents and counts are those of every type's rows: read
    whole (:func:`result_report`).
    """
    wanted = (metric, field)
    if annotation_type == OVERALL and annotation_type not in result.scores:
        found = derivations(result_report(session, submission, result, annotation_type), only=wanted)
        return found[0] if found else None
    where = (ResultDocument.result_id == result.id, ResultDocument.annotation_type == annotation_type)
    documents = dict.fromkeys(
        session.scalars(select(ResultDocument.document).where(*where).order_by(ResultDocument.id))
    )
    rows = session.execute(
        select(ResultDocument.document, ResultDocument.metric, ResultDocument.counts)
        .where(*where, ResultDocument.metric.in_(sources(metric)))
        .order_by(ResultDocument.id)
    )
    per_document = [{"document": document, "metric": name, **counts} for document, name, counts in rows]
    report = Report(submission.task, result.profile, {}, result.scores[annotation_type], per_document)
    found = derivations(report, only=wanted, documents=tuple(documents))
    return found[0] if found else None


def _report(task: str, profile: str, scores: list[Row], rows: list[dict[str, Any]]) -> Report:
    """One annotation type's Report from its score rows and per-document rows as stored: document, metric, counts."""
    per_document = [{"document": row["document"], "metric": row["metric"], **row["counts"]} for row in rows]
    return Report(task, profile, {}, scores, per_document)


def pooled_by_site(result: Result) -> bool:
    """Whether the result pools data sites' counts (its reproducibility names the sites): its documents are then
    resampled within each site, by its intervals and by the paired tests that rank it."""
    return "sites" in result.reproducibility


def result_intervals(session: Session, submission: Submission, result: Result) -> list[ResultInterval]:
    """The result's stored intervals; a result stored before intervals were gets them computed and stored now, and
    one stored before overall values were (:mod:`nlpbench.platform.overall`) its overall intervals."""
    found = of_result(session, result.id)
    by_site = pooled_by_site(result)
    if not found:
        reports = {kind: result_report(session, submission, result, kind) for kind in result.scores}
        found = intervals.compute(result.id, reports, by_site=by_site)
    elif applies(submission.task) and all(interval.annotation_type != OVERALL for interval in found):
        overall = {OVERALL: result_report(session, submission, result, OVERALL)}
        found += intervals.compute(result.id, overall, by_site=by_site)
    else:
        return found
    session.add_all(interval for interval in found if interval.id is None)
    session.flush()
    return found


def _without_intervals(task: str | None, submission_id: int | None) -> Select:
    """Scored results (of ``task``, of ``submission_id``) stored before intervals (or, of a task of several types,
    overall intervals) were, with their submissions."""
    several = [name for name in tasks.PHI_TASKS if applies(name)]
    with_overall = select(ResultInterval.result_id).where(ResultInterval.annotation_type == OVERALL)
    query = (
        select(Submission, Result)
        .join(Result, Result.submission_id == Submission.id)
        .where(
            Submission.status == SCORED,
            ~Result.id.in_(select(ResultInterval.result_id))
            | (Submission.task.in_(several) & ~Result.id.in_(with_overall)),
        )
    )
    if task is not None:
        query = query.where(Submission.task == task)
    if submission_id is not None:
        query = query.where(Submission.id == submission_id)
    return query


def lacking_intervals(session: Session, task: str | None = None, submission_id: int | None = None) -> bool:
    """Whether a scored result (of ``task``, of ``submission_id``) has no intervals yet: a read, no lock taken."""
    return session.execute(_without_intervals(task, submission_id).limit(1)).first() is not None


def ensure_intervals(session: Session, task: str | None = None, submission_id: int | None = None) -> int:
    """Compute and store the intervals of every scored result (of ``task``, of ``submission_id``) stored
    without them; how many results."""
    done = 0
    for submission, result in session.execute(_without_intervals(task, submission_id)).all():
        result_intervals(session, submission, result)
        done += 1
    return done
