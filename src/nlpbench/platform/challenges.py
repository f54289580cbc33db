"""Challenges and their phases: made from a spec, opened, closed and frozen; submissions admitted to a phase.

A challenge is made whole from its spec (:mod:`nlpbench.platform.challenge_specs`): every
dataset a phase names must be in the store at that version (a dataset, or a file-scored
task's gold) or held by data sites, and each phase's queue is opened. An organiser then moves a phase:

- ``open`` — it takes submissions from now (until ``until``, or its closing time if later);
  a frozen phase never opens again;
- ``close`` — it stops taking them now (and freezes, if its spec says so);
- ``freeze`` — closed for good: a later submission is refused, and no ``open`` undoes it.

A submission addressed to a phase (:func:`addressed`, then :func:`admit` in the transaction that
stores it) names one of its tasks and datasets, goes to its queue at its dataset's version, and
is refused — one line each — when its team is not registered (:mod:`nlpbench.platform.teams`), outside
the open window, after the freeze, when its kind is not
accepted, or over the phase's quota: so many per team per window (``day``, ``week``, ``month``,
as queues count them), counted across the phase's tasks unless it counts per task. A worker runs
the phase's submissions under the phase's limits (:func:`limits`: memory, CPU time, processes,
and the wall time that is also their time budget). Who sees the scores is
:mod:`nlpbench.platform.visibility`'s.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.platform import at_sites, visibility
from nlpbench.platform.challenge_specs import ChallengeSpec
from nlpbench.platform.errors import Conflict, Forbidden, NotFound, QuotaExceeded
from nlpbench.platform.keys import Caller
from nlpbench.platform.quotas import used, window_start
from nlpbench.platform.standings import unranked
from nlpbench.platform.teams import registered
from nlpbench.runner.limits import Limits
from nlpbench.store import Store
from nlpbench.store.challenges import Challenge, Phase
from nlpbench.store.models import Dataset
from nlpbench.store.submissions import Submission, TaskGold

if TYPE_CHECKING:
    from nlpbench.platform.queue import Request


def moment_text(value: datetime) -> str:
    """A moment as messages and listings give it: ``2026-12-01T00:00:00Z``."""
    return value.isoformat(timespec="seconds").replace("+00:00", "Z")


# --- making and finding -----------------------------------------------------------------------


def create(store: Store, spec: ChallengeSpec) -> None:
    """Store the challenge and its phases, and open their queues; :class:`Conflict` when the name is taken."""
    from nlpbench.platform.queue import get_queue

    with store.session() as session:
        if session.scalars(select(Challenge.id).where(Challenge.name == spec.name)).first() is not None:
            raise Conflict(f"a challenge {spec.name} exists already")
        for index, phase in enumerate(spec.phases):
            for dataset, version in phase.datasets.items():
                _check_dataset(session, phase.tasks, dataset, version, f"phases[{index}].datasets")
        challenge = Challenge(name=spec.name, title=spec.title, description=spec.description)
        session.add(challenge)
        session.flush()
        for position, phase in enumerate(spec.phases):
            get_queue(session, phase.queue)
            session.add(
                Phase(
                    challenge_id=challenge.id,
                    name=phase.name,
                    position=position,
                    tasks=list(phase.tasks),
                    datasets=phase.datasets,
                    queue=phase.queue,
                    opens_at=phase.opens_at,
                    closes_at=phase.closes_at,
                    kinds=list(phase.kinds),
                    quota=phase.quota,
                    quota_window=phase.quota_window,
                    quota_per_task=phase.quota_per_task,
                    memory_bytes=phase.limits.memory_bytes,
                    cpu_seconds=phase.limits.cpu_seconds,
                    processes=phase.limits.processes,
                    wall_seconds=phase.limits.wall_seconds,
                    visibility=phase.visibility,
                    freeze_at_close=phase.freeze_at_close,
                )
            )


def _check_dataset(session: Session, names: tuple[str, ...], dataset: str, version: str, field: str) -> None:
    """That ``dataset`` is in the store at ``version``: a dataset of the store, or a gold of one of the tasks; or
    a dataset data sites hold (:mod:`nlpbench.platform.at_sites`), each site checking its version when it runs."""
    if at_sites.holding(session, dataset):
        return
    found = session.scalars(select(Dataset.version).where(Dataset.name == dataset)).first() == version
    gold = select(TaskGold.id).where(TaskGold.task.in_(names), TaskGold.dataset == dataset, TaskGold.version == version)
    if not found and session.scalars(gold).first() is None:
        raise NotFound(f"{field}: no dataset {dataset}@{version} in the store (nor a gold of the phase's tasks)")


def challenge(session: Session, name: str) -> Challenge:
    found = session.scalars(select(Challenge).where(Challenge.name == name[:60])).first()
    if found is None:
        raise NotFound(f"no challenge {name[:60]!r}")
    return found


def phases(session: Session, of: Challenge) -> list[Phase]:
    return list(session.scalars(select(Phase).where(Phase.challenge_id == of.id).order_by(Phase.position)))


def phase(session: Session, challenge_name: str, name: str) -> Phase:
    found = next((p for p in phases(session, challenge(session, challenge_name)) if p.name == name), None)
    if found is None:
        raise NotFound(f"challenge {challenge_name} has no phase {name[:60]!r}")
    return found


# --- moving a phase ---------------------------------------------------------------------------


def open_phase(
    store: Store, challenge_name: str, name: str, moment: datetime, *, until: datetime | None = None
) -> Phase:
    """Take submissions from ``moment`` until ``until`` (default: its closing time, which must be later)."""
    with store.session() as session:
        found = phase(session, challenge_name, name)
        _not_frozen(found, moment, "opened")
        closes = until or found.closes_at
        if closes <= moment:
            raise Conflict(f"phase {name} would close at {moment_text(closes)}, which has passed: give a later time")
        found.opens_at, found.closes_at = min(found.opens_at, moment), closes
        return found


def close_phase(store: Store, challenge_name: str, name: str, moment: datetime) -> Phase:
    """Take no more submissions from ``moment`` (freezing, if the phase freezes at close); its scores, hidden
    until now, go on the leaderboard, whose columns are ranked again with them."""
    from nlpbench.platform import ranks  # it scores through the queue, which admits through this module

    with store.session() as session:
        found = phase(session, challenge_name, name)
        _not_frozen(found, moment, "closed")
        found.closes_at = min(found.closes_at, moment)
        found.opens_at = min(found.opens_at, found.closes_at)
        session.flush()
        for task in found.tasks:
            ranks.rank(session, task)
        return found


def freeze_phase(store: Store, challenge_name: str, name: str, moment: datetime) -> Phase:
    """Close the phase for good at ``moment``: no submission after, and no ``open``."""
    closed = close_phase(store, challenge_name, name, moment)
    with store.session() as session:
        found = session.get_one(Phase, closed.id)
        found.frozen_at = moment
        return found


def _not_frozen(found: Phase, moment: datetime, what: str) -> None:
    if visibility.frozen(found, moment):
        raise Conflict(f"phase {found.name} is frozen: it can no longer be {what}")


# --- submissions to a phase -------------------------------------------------------------------


def addressed(session: Session, request: Request) -> Request:
    """The request as its phase has it: the phase's queue and its version of the dataset; refused (one line)
    when it names a task or dataset the phase does not score, another queue or another version."""
    assert request.challenge is not None and request.phase is not None  # a request to a phase names both
    found = phase(session, request.challenge, request.phase)
    dataset, _, version = request.dataset.partition("@")
    where = f"phase {found.name} of challenge {request.challenge}"
    if request.task not in found.tasks:
        raise Forbidden(f"{where} scores {', '.join(found.tasks)}, not {request.task}")
    if dataset not in found.datasets:
        raise Forbidden(f"{where} scores the datasets {', '.join(found.datasets)}, not {dataset[:60]}")
    if version and version != found.datasets[dataset]:
        raise Forbidden(f"{where} scores {dataset}@{found.datasets[dataset]}, not version {version[:40]}")
    from nlpbench.platform.queue import DEFAULT_QUEUE

    if request.queue not in (DEFAULT_QUEUE, found.queue):
        raise Forbidden(f"{where} takes submissions in its queue {found.queue}, not {request.queue}")
    return replace(request, queue=found.queue, dataset=f"{dataset}@{found.datasets[dataset]}")


def admit(session: Session, request: Request, kind: str, moment: datetime) -> int:
    """Inside the transaction that stores the submission: the phase's id, or the one-line refusal of a
    submission of a team that is not registered, made outside its open window, after its freeze, of a kind it
    does not accept, or over its quota (counted under a lock, as queues' quotas are)."""
    assert request.challenge is not None and request.phase is not None  # a request to a phase names both
    found = phase(session, request.challenge, request.phase)
    where = f"phase {found.name} of challenge {request.challenge}"
    registered(session, request.team)
    now = visibility.state(found, moment)
    if now == visibility.FROZEN:
        raise Conflict(f"{where} is frozen: it takes no more submissions")
    if now == visibility.SCHEDULED:
        raise Conflict(f"{where} opens at {moment_text(found.opens_at)}")
    if now == visibility.CLOSED:
        raise Conflict(f"{where} closed at {moment_text(found.closes_at)}")
    if kind not in found.kinds:
        raise Forbidden(f"{where} accepts {', '.join(found.kinds)} submissions, not {kind}")
    if found.quota is not None:
        _check_quota(session, found, request, moment)
    return found.id


def _check_quota(session: Session, found: Phase, request: Request, moment: datetime) -> None:
    assert found.quota is not None  # a phase without a quota is not checked
    start = window_start(moment, found.quota_window)
    mine: tuple[Any, ...] = (Submission.phase_id == found.id, Submission.team == request.team)
    counted = "of the phase's tasks"
    if found.quota_per_task:
        mine, counted = (*mine, Submission.task == request.task), f"of {request.task}"
    lock = f"phase/{found.id}/{request.team}" + (f"/{request.task}" if found.quota_per_task else "")
    if used(session, lock, mine, start) >= found.quota:
        raise QuotaExceeded(
            f"team {request.team} has used its {found.quota} submissions {counted} in phase {found.name} "
            f"this {found.quota_window} (the window began {start:%Y-%m-%d %H:%M} UTC)"
        )


def limits(found: Phase) -> Limits:
    """What a team's tool may use in the phase, as the sandbox enforces it."""
    return Limits(
        memory_bytes=found.memory_bytes,
        cpu_seconds=found.cpu_seconds,
        processes=found.processes,
        wall_seconds=found.wall_seconds,
    )


# --- what a caller sees -----------------------------------------------------------------------


def challenge_json(session: Session, found: Challenge, moment: datetime) -> dict[str, Any]:
    """A challenge and its phases with their state at ``moment`` (settings only: no submission, no score)."""
    return {
        "name": found.name,
        "title": found.title,
        "description": found.description,
        "phases": [phase_json(p, moment) for p in phases(session, found)],
    }


def phase_json(found: Phase, moment: datetime) -> dict[str, Any]:
    return {
        "name": found.name,
        "state": visibility.state(found, moment),
        "tasks": found.tasks,
        "datasets": [f"{name}@{version}" for name, version in found.datasets.items()],
        "queue": found.queue,
        "opens": moment_text(found.opens_at),
        "closes": moment_text(found.closes_at),
        "kinds": found.kinds,
        "quota": None
        if found.quota is None
        else {"submissions": found.quota, "window": found.quota_window, "perTask": found.quota_per_task},
        "limits": {
            "memoryMb": found.memory_bytes // 2**20,
            "cpuSeconds": found.cpu_seconds,
            "processes": found.processes,
            "wallSeconds": found.wall_seconds,
        },
        "visibility": found.visibility,
        "freezeAtClose": found.freeze_at_close,
        "frozenAt": moment_text(found.frozen_at) if found.frozen_at is not None else None,
    }


def leaderboard(session: Session, found: Phase, viewer: Caller, moment: datetime) -> dict[str, Any]:
    """The phase's leaderboard as ``viewer`` may see it at ``moment``.

    With its scores shown: per task, a row per team and tool with its best scored submission in each column
    (dataset, and annotation type where the task has several) — value and 95 % interval, as the task's table
    has them (:func:`~nlpbench.platform.standings.unranked`, of this phase's submissions only). While they are
    hidden (:func:`~nlpbench.platform.visibility.scores_hidden`) a team sees instead the status of every
    submission of a private phase, and of its own submissions only in a blind one; an organiser sees the
    scores, always.
    """
    hidden = visibility.scores_hidden(found, moment) and not viewer.organiser
    data: dict[str, Any] = {"phase": found.name, "visibility": found.visibility, "scoresHidden": hidden}
    if hidden:
        query = select(Submission).where(Submission.phase_id == found.id)
        if found.visibility == "blind":
            query = query.where(Submission.team == viewer.team)
        data["submissions"] = [
            {"id": s.id, "team": s.team, "task": s.task, "dataset": s.dataset, "status": s.status}
            for s in session.scalars(query.order_by(Submission.id))
        ]
        return data
    data["rows"] = rows = []
    for task in found.tasks:
        table = unranked(session, task, "best", phase=found.id)
        for column in table.columns:
            held = [(line, line.cells[column]) for line in table.lines if column in line.cells]
            for line, cell in sorted(held, key=lambda pair: -pair[1].value):
                rows.append(
                    {
                        "task": task,
                        "column": column,
                        "team": line.team,
                        "tool": line.tool,
                        "submission": cell.submission.id,
                        "value": cell.value,
                        "low": cell.low,
                        "high": cell.high,
                    }
                )
    return data
