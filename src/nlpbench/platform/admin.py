"""The queue as organisers watch it: the workers and the leases they hold, the submissions stuck past twice
their time budget, and re-queueing one of those.

- A *worker* is known by the submissions it holds: each running submission (``VALIDATING``, ``ANNOTATING``,
  ``SCORING``) names its worker and when that worker's lease ends; a lease already ended is one the next
  claim takes over (:func:`nlpbench.platform.queue.claim`).
- A submission is *stuck* when it has run for more than :data:`STUCK_FACTOR` times its time budget (its
  phase's wall time, or its queue's time budget): from its first ``ANNOTATING`` (when the budget starts), or,
  before it, from its last move (its claim). A worker whose tool hangs while its heartbeat still renews the
  lease keeps such a submission forever; nothing takes it over.
- :func:`requeue` takes a stuck submission away from its worker and queues it again from the start, in one
  transaction (the row locked on PostgreSQL): its worker and lease are cleared and its status is
  ``RECEIVED``, so the stuck worker's next renewal or fenced write fails (:class:`~nlpbench.platform.errors.Lost`)
  and only the worker that claims it next runs it. Like a re-run (:mod:`nlpbench.platform.moderation`) it
  is the same submission, whose quota place was taken when it was made: its team spends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.platform import moderation
from nlpbench.platform import queue as queues
from nlpbench.platform.errors import Conflict, NotFound
from nlpbench.platform.views import moment
from nlpbench.store import Store
from nlpbench.store.challenges import Phase
from nlpbench.store.submissions import RECEIVED, RUNNING, Queue, Submission

#: How many times its time budget a submission runs before it is stuck.
STUCK_FACTOR = 2
#: The time budget of a submission whose queue has no row (a new queue's).
DEFAULT_BUDGET: float = Queue.__table__.c.time_budget_seconds.default.arg


@dataclass(frozen=True)
class Lease:
    """A running submission as its worker holds it."""

    submission: int
    queue: str
    team: str
    task: str
    status: str
    worker: str | None
    lease_expires_at: datetime | None
    #: Since when it runs (its first ANNOTATING, else its claim), its time budget, and whether it is stuck.
    since: datetime
    budget_seconds: float
    stuck: bool

    def expired(self, at: datetime) -> bool:
        """Whether the lease has ended at ``at`` (the next claim takes the submission over)."""
        return self.lease_expires_at is None or self.lease_expires_at < at

    def as_json(self, at: datetime) -> dict[str, object]:
        return {
            "submission": self.submission,
            "queue": self.queue,
            "team": self.team,
            "task": self.task,
            "status": self.status,
            "worker": self.worker,
            "leaseExpiresAt": moment(self.lease_expires_at),
            "leaseExpired": self.expired(at),
            "runningSince": moment(self.since),
            "runningSeconds": round((at - self.since).total_seconds(), 1),
            "budgetSeconds": self.budget_seconds,
            "stuck": self.stuck,
        }


def _budget(session: Session, submission: Submission) -> float:
    """The submission's time budget: its phase's wall time, else its queue's time budget."""
    if submission.phase_id is not None:
        phase = session.get(Phase, submission.phase_id)
        if phase is not None:
            return phase.wall_seconds
    found = session.scalars(select(Queue.time_budget_seconds).where(Queue.name == submission.queue)).first()
    return found if found is not None else DEFAULT_BUDGET


def _lease(session: Session, submission: Submission, at: datetime) -> Lease:
    since = submission.started_at or submission.updated_at
    budget = _budget(session, submission)
    return Lease(
        submission=submission.id,
        queue=submission.queue,
        team=submission.team,
        task=submission.task,
        status=submission.status,
        worker=submission.worker,
        lease_expires_at=submission.lease_expires_at,
        since=since,
        budget_seconds=budget,
        stuck=(at - since).total_seconds() > STUCK_FACTOR * budget,
    )


def leases(session: Session, at: datetime, queue: str | None = None) -> list[Lease]:
    """Every running submission (of ``queue``, if named), oldest first."""
    query = select(Submission).where(Submission.status.in_(RUNNING)).order_by(Submission.id)
    if queue is not None:
        query = query.where(Submission.queue == queue)
    return [_lease(session, submission, at) for submission in session.scalars(query)]


def overview(session: Session, at: datetime, queue: str | None = None) -> dict[str, Any]:
    """The admin view as JSON: ``workers`` (each with the leases it holds), ``stuck`` submissions, and how many
    submissions wait (RECEIVED) per queue."""
    held = leases(session, at, queue)
    workers: dict[str, list[Lease]] = {}
    for lease in held:
        workers.setdefault(lease.worker or "(none)", []).append(lease)
    waiting = select(Submission.queue).where(Submission.status == RECEIVED)
    if queue is not None:
        waiting = waiting.where(Submission.queue == queue)
    counts: dict[str, int] = {}
    for name in session.scalars(waiting):
        counts[name] = counts.get(name, 0) + 1
    return {
        "at": moment(at),
        "stuckFactor": STUCK_FACTOR,
        "workers": [
            {"name": name, "leases": [lease.as_json(at) for lease in mine]} for name, mine in sorted(workers.items())
        ],
        "stuck": [lease.as_json(at) for lease in held if lease.stuck],
        "waiting": dict(sorted(counts.items())),
    }


def requeue(store: Store, submission_id: int, *, by: str = "organiser", at: datetime | None = None) -> Submission:
    """Take a stuck submission from its worker and queue it again from the start (RECEIVED), without spending
    its team's quota; :class:`Conflict` when it is not running, or not stuck yet."""
    at = at or queues.now()
    with store.session() as session:
        query = select(Submission).where(Submission.id == submission_id)
        if store.dialect == "postgresql":  # the stuck worker's fenced writes wait, then find it gone
            query = query.with_for_update()
        submission = session.scalars(query).first() if 0 < submission_id <= queues.MAX_ID else None
        if submission is None:
            raise NotFound(f"no submission {submission_id}")
        if submission.status not in RUNNING:
            raise Conflict(f"submission {submission_id} is {submission.status}: only a running one is re-queued")
        lease = _lease(session, submission, at)
        if not lease.stuck:
            ran = round((at - lease.since).total_seconds())
            raise Conflict(
                f"submission {submission_id} is not stuck: it has run {ran} s of its "
                f"{STUCK_FACTOR} × {lease.budget_seconds:g} s"
            )
        worker = submission.worker or "no worker"
        submission.worker = submission.lease_expires_at = None
        moderation.restart(session, submission)
        queues.move(session, submission, RECEIVED, f"re-queued by {by}, taken from {worker}: it costs no quota")
        return submission
