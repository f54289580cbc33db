"""Data sites: where a site's notes stay, what the centre knows of each, and what a site sends back.

The centre (the platform a challenge runs on) keeps a :class:`Site` per data
site with the hash of its key and the datasets it holds (:class:`SiteDataset`,
each with the content hash of its first result); a submission made to a
dataset that sites hold is run at each of them, one :class:`SiteRun` per site,
which holds what that site returned: per-document counts under ids of the
site's making, the dataset's content hash, and reproducibility fields — never a
note. A site's own store keeps a :class:`SiteJob` per run it took, linking it to
the local submission that runs it, so that a site stopped mid-run goes on.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from nlpbench.store.models import NAME_LENGTH, Base, Json, UtcDateTime, utcnow
from nlpbench.store.submissions import Submission


class Site(Base):
    """A data site the centre sends submissions to; its key is stored as a prefix and a SHA-256 of the secret."""

    __tablename__ = "sites"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH), unique=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    #: When the site last asked for work or reported (NULL: never).
    seen_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)


class SiteDataset(Base):
    """A dataset a site holds; ``content_hash`` is fixed by its first result, and a result of another is refused."""

    __tablename__ = "site_datasets"
    __table_args__ = (UniqueConstraint("site_id", "dataset"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    site_id: Mapped[int] = mapped_column(ForeignKey(Site.id, ondelete="CASCADE"))
    dataset: Mapped[str] = mapped_column(String(NAME_LENGTH), index=True)
    content_hash: Mapped[str | None] = mapped_column(String(80), default=None)


class SiteRun(Base):
    """One submission run at one site: ``WAITING`` for it, ``RUNNING`` there, ``RETURNED`` or ``FAILED``.

    ``reports`` maps each annotation type to the site's overall score rows and per-document rows (documents
    named ``d1``, ``d2``, … in the site's order); ``intervals`` the site's primary value of each type with its
    interval; ``reason`` is a line of nlpbench's own making (a status, a count), never the site's words.
    """

    __tablename__ = "site_runs"
    __table_args__ = (UniqueConstraint("submission_id", "site_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey(Submission.id, ondelete="CASCADE"), index=True)
    site_id: Mapped[int] = mapped_column(ForeignKey(Site.id, ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(12))
    reason: Mapped[str] = mapped_column(Text, default="")
    content_hash: Mapped[str | None] = mapped_column(String(80), default=None)
    reports: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    intervals: Mapped[list[dict[str, Any]] | None] = mapped_column(Json, default=None)
    reproducibility: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    notes_done: Mapped[int] = mapped_column(Integer, default=0)
    notes_total: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class SiteJob(Base):
    """At a site: the centre's run ``run_id`` (of the centre at ``central``) and the local submission running it.

    ``state`` is ``running``, ``held`` (finished, waiting for the site's approval), ``approved`` or ``sent``.
    """

    __tablename__ = "site_jobs"
    __table_args__ = (UniqueConstraint("central", "run_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    central: Mapped[str] = mapped_column(Text)
    run_id: Mapped[int] = mapped_column(Integer)
    submission_id: Mapped[int] = mapped_column(ForeignKey(Submission.id, ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(String(12))
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
