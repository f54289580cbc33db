"""What an LLM tool said of each note it annotated, stored, charged to its scores, and summed per submission.

An LLM tool (``nlpbench serve --llm``) answers each ``POST /text…Annotations``
with an ``X-Nlpbench-Account`` header (:mod:`nlpbench.toolapi.account`): how
the mentions of that type were placed in the note (exact, normalised, fuzzy,
unplaced) and what the note cost (tokens in and out, latency, cached). The
runner checks each header strictly (:meth:`~nlpbench.toolapi.account.Account.parse`:
bounded size, known fields, counts of at most 12 digits) and a bad one fails
the note, in a line that names the field, never the header's value. The
worker keeps one :class:`~nlpbench.store.submissions.NoteAccount` row per
note (:func:`note_row`), in the transaction that stores the note's
annotations, after checking that the note's answers agree on what the one
model call cost.

**Unplaced mentions are false positives.** A mention the model returned that
is nowhere in the note has no offsets, so the tool API's answer cannot carry
it, but it was a prediction and it was wrong. When a submission is scored,
:func:`charge_unplaced` adds each unplaced mention of a type as one false
positive of that type to the note's per-document row of *every* metric of the
type, and to the type's overall rows (their precision and F1 recomputed as
the profile computes them). Every interval and rank derives from the
per-document rows, so they include them too. One false positive per mention
in every metric, ``token`` included: a mention is at least one token, so this
is the least an invented mention could cost (its text, and so its tokens, is
not sent: the header holds counts only). The per-subtype rows leave them out
(the header gives no subtype); the result's warnings say how many were charged.

An LLM de-identifier (``nlpbench serve --annotator deidentifier --llm``)
sends one such header with each ``POST /deidentifiedNotes`` answer: the
note's account, stored the same way without counts per type. The worker's
loops keep both through one :class:`Accounting`, which also holds the
submission's :class:`TokenBudget`.

A submission's :class:`Usage` sums its notes: grounding counts, tokens, the
nearest-rank latency percentiles per note (:func:`nlpbench.toolapi.cost.percentile`)
and, when the queue's price table (organisers') prices the model the
submission names, the cost :math:`(t_{in} p_{in} + t_{out} p_{out}) / 10^6` dollars.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Integer, cast, func, insert, select
from sqlalchemy.orm import Session

from nlpbench.metrics.counts import PRF
from nlpbench.model import Document
from nlpbench.profiles.spans import SpanProfile
from nlpbench.report.model import Report
from nlpbench.store.submissions import NoteAccount, Queue, Submission
from nlpbench.toolapi.account import ACCOUNTS, HEADER, NOTE_ACCOUNT, Account
from nlpbench.toolapi.cost import PERCENTILES, parse_prices, percentile

#: The grounding stages, in the order of :class:`~nlpbench.toolapi.account.Account`'s fields.
STAGES = ("exact", "normalised", "fuzzy", "unplaced")


def note_row(submission_id: int, document: Document) -> dict[str, Any] | None:
    """The :class:`NoteAccount` row of an annotated or de-identified note whose tool sent accounts, else None.

    An annotated note's answers (one per type) share one model call: a :class:`~nlpbench.runner.client.ToolError`
    when they disagree on its tokens, latency or caching, naming the note, never a value. A de-identified
    note's one answer gives the note's account (:data:`~nlpbench.toolapi.account.NOTE_ACCOUNT`), without counts
    per type (``by_type`` is empty).
    """
    accounts: Mapping[str, Account] = document.metadata.get(ACCOUNTS) or {}
    note: Account | None = document.metadata.get(NOTE_ACCOUNT)
    if note is None:
        if not accounts:
            return None
        if len({(a.tokens_in, a.tokens_out, a.latency_ms, a.cached) for a in accounts.values()}) > 1:
            from nlpbench.runner.client import ToolError  # httpx and pydantic load for this error only

            raise ToolError(
                f"note {document.id}: the {HEADER} headers of its answers give different tokens, latency or "
                "caching, though one model call answers every type"
            )
        note = Account.of_note(accounts.values())
    return {
        "submission_id": submission_id,
        "note_identifier": document.id,
        **{stage: getattr(note, stage) for stage in STAGES},
        "tokens_in": note.tokens_in,
        "tokens_out": note.tokens_out,
        "latency_ms": note.latency_ms,
        "cached": bool(note.cached),
        "by_type": {label: {stage: getattr(a, stage) for stage in STAGES} for label, a in accounts.items()},
    }


class Accounting:
    """A run's accounts of its notes (:func:`note_row`) from each answer until the note is stored, and its token
    budget: what the worker's annotating and de-identifying loops share.

    :meth:`see` each answer as it comes, :meth:`spend` it when it joins a batch (why the run stops after it,
    if its tokens take the run over ``budget``), :meth:`store` the batch's rows in its transaction.
    """

    def __init__(self, submission_id: int, budget: TokenBudget):
        self.submission_id = submission_id
        self.budget = budget
        self._rows: dict[str, dict[str, Any]] = {}

    @classmethod
    def of(cls, session: Session, submission_id: int, token_budget: int | None) -> Accounting:
        """The accounting of a submission whose notes stored so far spent part of ``token_budget``."""
        return cls(submission_id, TokenBudget(token_budget, tokens_spent(session, submission_id)))

    def see(self, document: Document) -> None:
        """Keep the account of a note answered (a :class:`ToolError` for one that contradicts itself)."""
        row = note_row(self.submission_id, document)
        if row is not None:
            self._rows[document.id] = row

    def spend(self, document: Document) -> str | None:
        """Spend a note's tokens: why the run stops after it (its token budget), else None."""
        return self.budget.spend(self._rows.get(document.id))

    def store(self, session: Session, documents: list[Document]) -> None:
        """Insert the :class:`NoteAccount` rows of ``documents`` that have one, in ``session``'s transaction."""
        kept = [self._rows.pop(document.id) for document in documents if document.id in self._rows]
        if kept:
            session.connection().execute(insert(NoteAccount), kept)  # Core executemany: cheaper than the ORM's


def unplaced(session: Session, submission_id: int) -> dict[str, dict[str, int]]:
    """The submission's unplaced mentions: ``{type: {note: count}}``, counts above 0 only."""
    found: dict[str, dict[str, int]] = {}
    query = select(NoteAccount.note_identifier, NoteAccount.by_type).where(
        NoteAccount.submission_id == submission_id, NoteAccount.unplaced > 0
    )
    for note, by_type in session.execute(query):
        for label, counts in by_type.items():
            if counts["unplaced"]:
                found.setdefault(label, {})[note] = counts["unplaced"]
    return found


def charge_unplaced(
    report: Report,
    label: str,
    charged: Mapping[str, int],
    profile: SpanProfile,
    documents: Collection[str] | None = None,
) -> int:
    """Add ``charged[note]`` false positives to each per-document row of ``note`` in ``report`` (one
    annotation type's, :func:`charge_row`), and their sum to its overall rows; the number charged.

    Precision, recall and F1 are recomputed: a per-document row's from its counts (:class:`PRF`), an
    overall row's as ``profile`` reports them (:meth:`SpanProfile.values`). Subtype and macro rows keep theirs.
    ``documents``: the notes of the type's per-document rows when they were not kept in ``report`` but handed on
    as scored, each charged by :func:`charge_row` as it passed.
    """
    if documents is None:
        documents = {str(row["document"]) for row in report.per_document}
    charged = {note: count for note, count in charged.items() if count and note in documents}
    total = sum(charged.values())
    if not total:
        return 0
    for row in report.per_document:
        charge_row(row, charged)
    for row in report.scores:
        if row.get("label") is None and row.get("average") is None and "fp" in row:
            row |= _prf_fields(PRF(row["tp"], row["fp"] + total, row["fn"]), profile)
    report.warnings.append(
        f"{total} {label} mentions the tool could not place in their notes are counted as false positives of "
        "every metric (one per mention; not in the per-subtype rows nor their macro average)"
    )
    return total


def charge_row(row: dict[str, Any], charged: Mapping[str, int]) -> None:
    """Add ``charged[note]`` false positives to a per-document row of ``note``, its precision, recall and F1
    recomputed from its counts (:class:`PRF`)."""
    extra = charged.get(str(row["document"]), 0)
    if extra:
        row |= _prf_fields(PRF(row["tp"], row["fp"] + extra, row["fn"]), None)


def _prf_fields(prf: PRF, profile: SpanProfile | None) -> dict[str, Any]:
    precision, recall, f1 = profile.values(prf) if profile is not None else (prf.precision, prf.recall, prf.f1)
    return {"tp": prf.tp, "fp": prf.fp, "fn": prf.fn, "precision": precision, "recall": recall, "f1": f1}


@dataclass
class Usage:
    """A submission's notes as its LLM tool accounted for them: grounding counts, tokens, latency, cost."""

    notes: int = 0
    cached: int = 0
    grounding: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STAGES, 0))
    tokens_in: int = 0
    tokens_out: int = 0
    #: Nearest-rank percentiles of the latency per note, in milliseconds, by percentile (:data:`PERCENTILES`).
    latency_ms: dict[int, int] = field(default_factory=dict)
    #: The model the submission names, and the cost in US dollars when the queue's price table prices it.
    model: str | None = None
    cost: float | None = None

    @property
    def tokens(self) -> int:
        """Tokens in and out: what a token budget counts."""
        return self.tokens_in + self.tokens_out

    def as_json(self) -> dict[str, Any]:
        """The usage as the API and pages give it (``latencyMs`` keyed ``p50``, ``p95``, ``p99``)."""
        return {
            "notes": self.notes,
            "cached": self.cached,
            "grounding": self.grounding,
            "tokensIn": self.tokens_in,
            "tokensOut": self.tokens_out,
            "latencyMs": {f"p{p}": ms for p, ms in self.latency_ms.items()},
            "model": self.model,
            "costUsd": self.cost,
        }


def usage(session: Session, submission: Submission) -> Usage | None:
    """The submission's :class:`Usage`, None when its tool sent no account (not an LLM tool)."""
    return usages(session, [submission.id]).get(submission.id)


def usages(session: Session, submission_ids: Collection[int]) -> dict[int, Usage]:
    """The :class:`Usage` of each of the submissions whose tool sent accounts, by id (a few queries in all)."""
    mine = NoteAccount.submission_id.in_(submission_ids)
    sums = select(
        NoteAccount.submission_id,
        func.count(),
        *(func.sum(getattr(NoteAccount, name)) for name in (*STAGES, "tokens_in", "tokens_out")),
        func.sum(cast(NoteAccount.cached, Integer)),
    )
    found: dict[int, Usage] = {}
    for submission_id, notes, *counts, tokens_in, tokens_out, cached in session.execute(
        sums.where(mine).group_by(NoteAccount.submission_id)
    ):
        found[submission_id] = Usage(
            notes=notes,
            cached=int(cached),
            grounding=dict(zip(STAGES, map(int, counts), strict=True)),
            tokens_in=int(tokens_in),
            tokens_out=int(tokens_out),
        )
    latencies: dict[int, list[int]] = {}
    for submission_id, latency in session.execute(
        select(NoteAccount.submission_id, NoteAccount.latency_ms).where(mine)
    ):
        latencies.setdefault(submission_id, []).append(latency)
    priced = select(Submission.id, Submission.model, Queue.prices).outerjoin(Queue, Queue.name == Submission.queue)
    for submission_id, model, prices in session.execute(priced.where(Submission.id.in_(found))):
        used = found[submission_id]
        used.latency_ms = {p: percentile(latencies[submission_id], p) for p in PERCENTILES}
        used.model = model
        price = parse_prices({"models": prices or {}}, "the queue's price table").get(model or "")
        used.cost = price.cost(used.tokens_in, used.tokens_out) if price is not None else None
    return found


def tokens_spent(session: Session, submission_id: int) -> int:
    """Tokens in and out of the submission's notes stored so far: what its token budget has spent."""
    query = select(func.coalesce(func.sum(NoteAccount.tokens_in + NoteAccount.tokens_out), 0))
    return int(session.execute(query.where(NoteAccount.submission_id == submission_id)).scalar_one())


@dataclass
class TokenBudget:
    """A submission's token budget (the queue's ``token_budget``; None: none) and the tokens spent so far.

    Every note's tokens count, a cached answer's too (the tokens of the call that filled the cache): a
    budget, like the usage shown, measures what the tool needs for the notes, not whether a cache was warm.
    """

    limit: int | None
    spent: int = 0

    def spend(self, row: Mapping[str, Any] | None) -> str | None:
        """Add a note's tokens (its :func:`note_row`, None for a note without an account); why the run
        stops when they take it over the budget, else None."""
        if row is None:
            return None
        self.spent += row["tokens_in"] + row["tokens_out"]
        if self.limit is not None and self.spent > self.limit:
            return f"token budget of {self.limit} tokens exceeded ({self.spent} tokens spent)"
        return None
