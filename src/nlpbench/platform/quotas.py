"""Quotas: how many submissions a team may make of a task in a queue, per day, week or month.

Quotas count, per team, task and queue, the submissions made since the
window began (``day``: 00:00 UTC; ``week``: Monday 00:00 UTC; ``month``: the
1st, 00:00 UTC) that got past validation or may still: a submission that
never did costs no place however it ended (INVALID, or CANCELLED or FAILED
before it was validated — a command tool that exits at its start, a
submission that stopped its workers), and one waiting for validation holds
its place until it fails it. The count and the insert run under a lock per
(team, task, queue) — an advisory transaction lock on PostgreSQL, the write
lock on SQLite — so concurrent submits never overrun the quota.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, text
from sqlalchemy.orm import Session

from nlpbench.errors import InputError
from nlpbench.platform.errors import QuotaExceeded
from nlpbench.store.submissions import CANCELLED, FAILED, INVALID, WINDOWS, Queue, Submission


def window_start(moment: datetime, window: str) -> datetime:
    """When the quota window holding ``moment`` began, in UTC."""
    day = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if window == "day":
        return day
    if window == "week":
        return day - timedelta(days=day.weekday())
    if window == "month":
        return day.replace(day=1)
    raise InputError(f"unknown quota window {window!r}; known: {', '.join(WINDOWS)}")


def check_quota(session: Session, queue: Queue, team: str, task: str, moment: datetime) -> None:
    """Raise :class:`QuotaExceeded` when ``team`` has used its quota of ``task`` in ``queue`` in the window
    holding ``moment``; on PostgreSQL, first take the transaction's lock of (team, task, queue)."""
    assert queue.quota is not None  # a queue without a quota is not checked
    start = window_start(moment, queue.quota_window)
    mine = (Submission.team == team, Submission.task == task, Submission.queue == queue.name)
    if used(session, f"{team}/{task}/{queue.name}", mine, start) >= queue.quota:
        raise QuotaExceeded(
            f"team {team} has used its {queue.quota} submissions of {task} in queue {queue.name} "
            f"this {queue.quota_window} (the window began {start:%Y-%m-%d %H:%M} UTC)"
        )


def used(session: Session, lock: str, conditions: tuple[Any, ...], start: datetime) -> int:
    """How many submissions meeting ``conditions`` made since ``start`` count against a quota (see the module);
    on PostgreSQL, first take the transaction's advisory lock named ``lock``, held until it ends."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": lock})
    return session.execute(
        select(func.count()).where(
            *conditions,
            Submission.created_at >= start,
            Submission.status != INVALID,
            or_(Submission.status.not_in((CANCELLED, FAILED)), Submission.validated_at.is_not(None)),
        )
    ).scalar_one()
