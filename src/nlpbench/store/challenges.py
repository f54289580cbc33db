"""The tables of challenges: a challenge and its phases, and the teams registered to take part.

A *challenge* is a named benchmark an organiser runs; a *phase* of it (a
public development set, then a hidden test set) names the tasks and datasets
it scores, the queue its submissions go to, when it is open (``opens_at``
to ``closes_at``, UTC, the end excluded), the kinds of submission it accepts,
its quota, the limits a team's tool runs under, who sees its scores
(``visibility``) and whether it froze. A submission made to a phase carries
the phase's id (``submissions.phase_id``); only a registered *team* makes one. What the columns mean is enforced in
:mod:`nlpbench.platform.challenges`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from nlpbench.store.models import NAME_LENGTH, Base, Json, UtcDateTime, utcnow


class Challenge(Base):
    """A challenge: its name (as commands and URLs give it), title and description."""

    __tablename__ = "challenges"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH), unique=True)
    title: Mapped[str] = mapped_column(Text, default="")
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class Phase(Base):
    """A phase of a challenge; ``position`` orders a challenge's phases as its spec listed them."""

    __tablename__ = "phases"
    __table_args__ = (UniqueConstraint("challenge_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    challenge_id: Mapped[int] = mapped_column(ForeignKey("challenges.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    position: Mapped[int] = mapped_column(Integer, default=0)
    #: The task names a submission to the phase may give.
    tasks: Mapped[list[str]] = mapped_column(Json)
    #: ``{name: version}``: the datasets (or golds) scored, each at the one version the phase uses.
    datasets: Mapped[dict[str, str]] = mapped_column(Json)
    queue: Mapped[str] = mapped_column(String(NAME_LENGTH))
    opens_at: Mapped[datetime] = mapped_column(UtcDateTime)
    closes_at: Mapped[datetime] = mapped_column(UtcDateTime)
    #: Submission kinds accepted (of :data:`nlpbench.store.submissions.KINDS`).
    kinds: Mapped[list[str]] = mapped_column(Json)
    #: Submissions per team per window; NULL: no quota.
    quota: Mapped[int | None] = mapped_column(Integer, default=None)
    quota_window: Mapped[str] = mapped_column(String(10), default="day")
    #: Whether the quota counts per task (else across the phase's tasks).
    quota_per_task: Mapped[bool] = mapped_column(Boolean, default=False)
    memory_bytes: Mapped[int] = mapped_column(BigInteger)
    cpu_seconds: Mapped[float] = mapped_column(Float)
    processes: Mapped[int] = mapped_column(Integer)
    wall_seconds: Mapped[float] = mapped_column(Float)
    #: ``public``, ``private`` or ``blind`` (:data:`nlpbench.store.vocabulary.PHASE_VISIBILITIES`).
    visibility: Mapped[str] = mapped_column(String(10), default="public")
    #: Whether the phase freezes when it closes (else an organiser freezes it).
    freeze_at_close: Mapped[bool] = mapped_column(Boolean, default=False)
    #: When an organiser froze it; NULL: not frozen (but see ``freeze_at_close``).
    frozen_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)


class Team(Base):
    """A team registered to take part in challenges: its name (as its key and submissions give it), its
    affiliation (public) and how to reach its members (the organisers' only)."""

    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH), unique=True)
    affiliation: Mapped[str] = mapped_column(Text, default="")
    contact: Mapped[str] = mapped_column(Text, default="")
    registered_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
