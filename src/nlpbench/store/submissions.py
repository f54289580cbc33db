"""The tables of the submission queue: queues, submissions and their events, golds of file-scored tasks, results.

A *queue* holds its settings (time budget, quota, scoring profile, request
limits). A *submission* is one team's tool (a URL, a command, an image) or
prediction file for one task and dataset; its ``status`` moves
``RECEIVED → VALIDATING → (INVALID) → ANNOTATING → SCORING → SCORED`` or ends
``FAILED`` / ``CANCELLED``, and every move is an *event* row with its time
and a one-line reason. A worker owns a submission while its lease
(``worker``, ``lease_expires_at``) is alive. Predictions of PHI tasks live in
annotation store ``submission-<id>`` of the dataset; the notes a ``deid``
submission's de-identifier returned are *de-identified notes*; a file-scored
task's predictions are kept as the file's text, in a row of its own. A *result* is one scoring of a
submission under a profile: its score rows, what makes it reproducible, and
a row of counts per document, annotation type and metric.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.ext.associationproxy import AssociationProxy, association_proxy
from sqlalchemy.orm import Mapped, mapped_column, relationship

from nlpbench.store.challenges import Phase
from nlpbench.store.models import NAME_LENGTH, Base, Json, UtcDateTime, utcnow
from nlpbench.store.vocabulary import (  # noqa: F401  # the statuses and windows, where their users import them
    ANNOTATING,
    CANCELLED,
    FAILED,
    INVALID,
    RECEIVED,
    SCORED,
    SCORING,
    STATUSES,
    VALIDATING,
    WINDOWS,
)

#: Statuses a worker holds under a lease.
RUNNING = (VALIDATING, ANNOTATING, SCORING)
FINAL = (INVALID, SCORED, FAILED, CANCELLED)
KINDS = ("tool", "command", "archive", "image", "predictions", "llm")


class Queue(Base):
    """A queue's settings; a queue named in a submission and not yet here gets the defaults below."""

    __tablename__ = "queues"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH), unique=True)
    time_budget_seconds: Mapped[float] = mapped_column(Float, default=7200.0)
    #: Submissions per team and task in one window; NULL: no quota. The NLP Sandbox's: 2 a week.
    quota: Mapped[int | None] = mapped_column(Integer, default=2)
    quota_window: Mapped[str] = mapped_column(String(10), default="week")
    profile: Mapped[str] = mapped_column(String(40), default="standard")
    #: Whether a tool whose apiVersion is not nlpbench's is INVALID (else a warning).
    api_version_fatal: Mapped[bool] = mapped_column(Boolean, default=True)
    request_timeout: Mapped[float] = mapped_column(Float, default=30.0)
    retries: Mapped[int] = mapped_column(Integer, default=3)
    concurrency: Mapped[int] = mapped_column(Integer, default=8)
    max_response_bytes: Mapped[int] = mapped_column(Integer, default=32 * 2**20)
    #: Bytes resident a ``--command`` tool may hold in the process sandbox.
    tool_memory_bytes: Mapped[int] = mapped_column(BigInteger, default=2 * 2**30)
    #: Claims of one submission before it ends FAILED ("stopped N workers").
    max_attempts: Mapped[int] = mapped_column(Integer, default=3)
    #: Hosts (``host`` or ``host:port``) a team's tool URL may name besides public addresses.
    tool_hosts: Mapped[list[str]] = mapped_column(Json, default=list)
    #: Whether team tools may run in the weaker ``unshare`` fallback on public datasets when no sandbox is here.
    weak_sandbox: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Registries (``host[:port]``) a team's ``NAME@sha256:…`` image may be pulled from; none: uploads only.
    image_registries: Mapped[list[str]] = mapped_column(Json, default=list)
    #: Tokens (in and out, summed over notes) an LLM tool's submission may spend; NULL: no budget.
    token_budget: Mapped[int | None] = mapped_column(BigInteger, default=None)
    #: The organisers' price table, US dollars per million tokens by model:
    #: ``{model: {"input": p, "output": p}}`` (:mod:`nlpbench.toolapi.cost`).
    prices: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    #: The de-identification steps the queue's de-identifiers are asked for and scored against, 1.2.0
    #: ``DeidentificationStep`` objects; NULL: :data:`nlpbench.toolapi.deidentify.DEFAULT_STEPS`.
    deid_steps: Mapped[list[dict[str, Any]] | None] = mapped_column(Json, default=None)
    #: Where a worker posts each submission's completion (:mod:`nlpbench.platform.webhooks`); NULL: nowhere.
    webhook_url: Mapped[str | None] = mapped_column(Text, default=None)
    #: The organisers' secret the completion is signed with (HMAC-SHA256); kept as given, since it signs.
    webhook_secret: Mapped[str | None] = mapped_column(Text, default=None)


class Submission(Base):
    __tablename__ = "submissions"
    __table_args__ = (
        Index("ix_submissions_claim", "queue", "status"),
        Index("ix_submissions_quota", "team", "task", "queue", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    queue: Mapped[str] = mapped_column(String(NAME_LENGTH))
    team: Mapped[str] = mapped_column(String(NAME_LENGTH))
    task: Mapped[str] = mapped_column(String(40))
    dataset: Mapped[str] = mapped_column(String(NAME_LENGTH))
    dataset_version: Mapped[str | None] = mapped_column(String(40), default=None)
    kind: Mapped[str] = mapped_column(String(12))
    tool_url: Mapped[str | None] = mapped_column(Text, default=None)
    command: Mapped[str | None] = mapped_column(Text, default=None)
    image: Mapped[str | None] = mapped_column(Text, default=None)
    #: A prediction file's text (:class:`SubmittedPredictions`, a row of its own); None for other kinds.
    predictions: AssociationProxy[str | None] = association_proxy(
        "submitted_predictions", "text", creator=lambda text: SubmittedPredictions(text=text)
    )
    submitted_predictions: Mapped[SubmittedPredictions | None] = relationship(
        cascade="all, delete-orphan", passive_deletes=True
    )
    predictions_name: Mapped[str | None] = mapped_column(Text, default=None)
    #: ``team`` or ``organiser``: a team's tool URL reaches public addresses only (unless allow-listed), and
    #: what the network said of it is kept from the team.
    submitted_by: Mapped[str] = mapped_column(String(10), default="team")
    #: ``sha256:…`` of the uploaded archive (an OCI image or a tool's source) an ``image``/``archive`` runs.
    artifact: Mapped[str | None] = mapped_column(String(71), default=None)
    status: Mapped[str] = mapped_column(String(12), default=RECEIVED)
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    validated_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)
    worker: Mapped[str | None] = mapped_column(String(120), default=None)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    notes_total: Mapped[int] = mapped_column(Integer, default=0)
    notes_done: Mapped[int] = mapped_column(Integer, default=0)
    #: What ``GET /tool`` said at validation: name, version, license, url, apiVersion, type.
    tool_meta: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    warnings: Mapped[list[str]] = mapped_column(Json, default=list)
    #: The challenge phase it was made to (:mod:`nlpbench.store.challenges`); NULL: none.
    #: What its team says of it, shown on its page: a description and optional links to a paper and the code.
    description: Mapped[str | None] = mapped_column(Text, default=None)
    paper_url: Mapped[str | None] = mapped_column(Text, default=None)
    code_url: Mapped[str | None] = mapped_column(Text, default=None)
    #: ``disqualified`` or ``hidden`` by an organiser (off every leaderboard), with the reason; NULL: neither.
    removal: Mapped[str | None] = mapped_column(String(12), default=None)
    removal_reason: Mapped[str | None] = mapped_column(Text, default=None)
    phase_id: Mapped[int | None] = mapped_column(ForeignKey(Phase.id, ondelete="RESTRICT"), default=None, index=True)
    #: The model an LLM tool's submission says it runs: its price in the queue's price table.
    model: Mapped[str | None] = mapped_column(String(NAME_LENGTH * 2), default=None)
    #: An ``llm`` submission's prompt template (an organiser's endpoint, at ``tool_url``, served by the worker).
    template: Mapped[str | None] = mapped_column(String(NAME_LENGTH), default=None)
    #: A ``deid`` submission's de-identification steps, its queue's when a worker first claimed it: what its
    #: de-identifier is asked for and what it is scored and rescored against, whatever the queue asks later.
    #: NULL: not claimed yet (or claimed before they were kept, with :data:`nlpbench.toolapi.deidentify.DEFAULT_STEPS`).
    deid_steps: Mapped[list[dict[str, Any]] | None] = mapped_column(Json, default=None)


class SubmittedPredictions(Base):
    """A prediction-file submission's text, out of its submission's row: in SQLite, every column after a long
    text is reached through the text's overflow pages, so each read of a submission stepped through its file."""

    __tablename__ = "submitted_predictions"

    submission_id: Mapped[int] = mapped_column(ForeignKey(Submission.id, ondelete="CASCADE"), primary_key=True)
    text: Mapped[str] = mapped_column(Text)


class SubmissionEvent(Base):
    """A move of a submission to ``status``, when and why (one line, never note text or a tool's body)."""

    __tablename__ = "submission_events"
    __table_args__ = (Index("ix_submission_events_submission", "submission_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    status: Mapped[str] = mapped_column(String(12))
    reason: Mapped[str] = mapped_column(Text, default="")


class SubmissionLog(Base):
    """What a tool nlpbench started printed (stdout or stderr), capped; organisers only: it may hold PHI."""

    __tablename__ = "submission_logs"
    __table_args__ = (UniqueConstraint("submission_id", "stream"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    stream: Mapped[str] = mapped_column(String(10))
    content: Mapped[str] = mapped_column(Text, default="")
    truncated: Mapped[bool] = mapped_column(Boolean, default=False)


class DeidentifiedNote(Base):
    """A note of a ``deid`` submission's dataset as its de-identifier returned it: the note's id, the
    de-identified text and the tool's annotations of that text (NLP Sandbox arrays). Organisers only: a
    de-identifier may leave PHI in it."""

    __tablename__ = "deidentified_notes"
    __table_args__ = (UniqueConstraint("submission_id", "note_identifier"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    note_identifier: Mapped[str] = mapped_column(String(NAME_LENGTH))
    text: Mapped[str] = mapped_column(Text)
    annotations: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)


class TaskGold(Base):
    """The gold standard of a file-scored task on a named dataset: its files and fixed options.

    ``files`` maps each file argument of the task's scoring function to ``[file name, text]``.
    """

    __tablename__ = "task_golds"
    __table_args__ = (UniqueConstraint("task", "dataset", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task: Mapped[str] = mapped_column(String(40))
    dataset: Mapped[str] = mapped_column(String(NAME_LENGTH))
    version: Mapped[str] = mapped_column(String(40), default="1")
    files: Mapped[dict[str, list[str]]] = mapped_column(Json)
    options: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    content_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    #: ``public`` or ``private``, as a dataset's: whether teams may see per-document rows and errors.
    visibility: Mapped[str] = mapped_column(String(10), default="private")


class Result(Base):
    """One scoring of a submission under a profile."""

    __tablename__ = "results"
    __table_args__ = (UniqueConstraint("submission_id", "profile"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    profile: Mapped[str] = mapped_column(String(40))
    #: Score rows per annotation type (PHI) or for the task: ``{type: [rows]}``.
    scores: Mapped[dict[str, Any]] = mapped_column(Json)
    #: Tool, command hash or image, dataset name/version/content hash, profile, nlpbench version.
    reproducibility: Mapped[dict[str, Any]] = mapped_column(Json)
    warnings: Mapped[list[str]] = mapped_column(Json, default=list)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class ResultDocument(Base):
    """The counts of one document under one metric and annotation type: a report's per-document row."""

    __tablename__ = "result_documents"
    __table_args__ = (Index("ix_result_documents_result", "result_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    result_id: Mapped[int] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"))
    annotation_type: Mapped[str] = mapped_column(String(40))
    document: Mapped[str] = mapped_column(Text)
    metric: Mapped[str] = mapped_column(String(60))
    counts: Mapped[dict[str, Any]] = mapped_column(Json)


class PlatformKey(Base):
    """A platform API key: a team's (sees and makes its own submissions) or an organiser's (sees all, and logs).

    Stored as its public prefix and the SHA-256 of its secret, never the secret.
    """

    __tablename__ = "platform_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(10))
    team: Mapped[str | None] = mapped_column(String(NAME_LENGTH), default=None)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    label: Mapped[str] = mapped_column(Text, default="")
    #: A key past this moment, or revoked, is refused like an unknown one.
    expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)


class Artifact(Base):
    """An uploaded archive a team's tool runs from: an OCI image archive or a source archive, by content digest.

    Kept per team: a team submits only what it uploaded itself (a digest is shown on the public site, and
    knowing it must not let another team run the same tool as its own).

    Its bytes are kept in :class:`ArtifactChunk` rows of at most a few MiB, so
    that every worker sharing the store reads it and nothing holds it whole.
    """

    __tablename__ = "artifacts"
    __table_args__ = (UniqueConstraint("digest", "team"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[str] = mapped_column(String(71))
    kind: Mapped[str] = mapped_column(String(20))  # "oci-archive" or "source-archive"
    size: Mapped[int] = mapped_column(BigInteger)
    team: Mapped[str | None] = mapped_column(String(NAME_LENGTH), default=None)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class ArtifactChunk(Base):
    """Part ``seq`` (from 0) of an artifact's bytes."""

    __tablename__ = "artifact_chunks"
    __table_args__ = (UniqueConstraint("artifact_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    artifact_id: Mapped[int] = mapped_column(ForeignKey("artifacts.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class NoteAccount(Base):
    """What an LLM tool's ``X-Nlpbench-Account`` headers said of one note of a submission
    (:mod:`nlpbench.toolapi.account`): how its mentions were placed — in all and, in ``by_type``, per
    annotation type as ``{type: {"exact": n, "normalised": n, "fuzzy": n, "unplaced": n}}`` — and what the
    note cost: tokens in and out, latency, whether the tool's cache answered. Counts only, never text.

    Scoring charges each unplaced mention to its type as a false positive
    (:func:`nlpbench.platform.accounts.charge_unplaced`), so this row is read again by every rescoring.
    """

    __tablename__ = "note_accounts"
    __table_args__ = (UniqueConstraint("submission_id", "note_identifier"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    note_identifier: Mapped[str] = mapped_column(String(NAME_LENGTH))
    exact: Mapped[int] = mapped_column(BigInteger)
    normalised: Mapped[int] = mapped_column(BigInteger)
    fuzzy: Mapped[int] = mapped_column(BigInteger)
    unplaced: Mapped[int] = mapped_column(BigInteger)
    tokens_in: Mapped[int] = mapped_column(BigInteger)
    tokens_out: Mapped[int] = mapped_column(BigInteger)
    latency_ms: Mapped[int] = mapped_column(BigInteger)
    cached: Mapped[bool] = mapped_column(Boolean)
    by_type: Mapped[dict[str, Any]] = mapped_column(Json)
