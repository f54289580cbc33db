"""Who may see a challenge phase's scores, and when its phase takes submissions.

A phase is ``scheduled`` before ``opens_at``, ``open`` until ``closes_at``
(excluded), then ``closed``; it is ``frozen`` from the moment an organiser froze
it, or from its close when it freezes at close. Only an open phase that is not
frozen takes submissions; a frozen one never opens again.

Its scores are *hidden* while a phase that is not ``public`` has not closed:

- ``public``: every score is shown as it comes;
- ``private``: until the phase closes, only the organisers see scores; its
  leaderboard shows teams which teams submitted and how far each submission
  got, without a score;
- ``blind``: until the phase closes, only the organisers see scores, and a
  team sees its own submissions' status only — nothing of another team's.

From its close on, a private or blind phase's scores are shown as a public
one's. Hidden scores are on no page of the leaderboard site (its tables and
rank groups leave them out: :func:`shown`, which leaves out submissions organisers disqualified or hid too),
in no team's answer of the
platform API, and nowhere a team's key reaches.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from nlpbench.store.challenges import Phase
from nlpbench.store.submissions import Submission

SCHEDULED, OPEN, CLOSED, FROZEN = "scheduled", "open", "closed", "frozen"


def frozen(phase: Phase, moment: datetime) -> bool:
    """Whether the phase is frozen at ``moment``: an organiser froze it, or it froze at its close."""
    if phase.frozen_at is not None and phase.frozen_at <= moment:
        return True
    return phase.freeze_at_close and phase.closes_at <= moment


def state(phase: Phase, moment: datetime) -> str:
    """``scheduled``, ``open``, ``closed`` or ``frozen`` at ``moment``."""
    if frozen(phase, moment):
        return FROZEN
    if moment < phase.opens_at:
        return SCHEDULED
    return OPEN if moment < phase.closes_at else CLOSED


def scores_hidden(phase: Phase | None, moment: datetime) -> bool:
    """Whether only the organisers may see the scores of the phase's submissions at ``moment``."""
    return phase is not None and phase.visibility != "public" and moment < phase.closes_at


def shown(moment: datetime) -> Any:
    """A condition on :class:`Submission` rows: their scores may be shown to anyone at ``moment`` (made to no
    phase, or to a public phase, or to one that has closed; and not taken off the leaderboards)."""
    hidden = select(Phase.id).where(Phase.visibility != "public", Phase.closes_at > moment)
    return and_(kept(), or_(Submission.phase_id.is_(None), Submission.phase_id.not_in(hidden)))


def kept() -> Any:
    """A condition on :class:`Submission` rows: no organiser disqualified or hid them
    (:mod:`nlpbench.platform.moderation`)."""
    return Submission.removal.is_(None)


def hidden(session: Session, submission: Submission, moment: datetime) -> bool:
    """Whether only the organisers may see ``submission``'s scores at ``moment`` (its phase hides them)."""
    found = session.get(Phase, submission.phase_id) if submission.phase_id is not None else None
    return scores_hidden(found, moment)
