"""The stored rank groups of one leaderboard column, computed once for the results it compares.

Ranking a column takes a paired bootstrap test per pair of tools over their
per-document counts: seconds for thousands of notes. Pages must not compute
it (nor write it) on a GET, so :func:`nlpbench.platform.ranks.rank` computes the
groups of every column whose results changed, when a result is stored, and stores them here, keyed by
the task, the column and a digest of the results compared; a page uses the
row whose digest matches the results it shows, and shows no rank otherwise.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import Float, Integer, String, UniqueConstraint, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from nlpbench.store.models import Base, Json, UtcDateTime, utcnow


class RankGroups(Base):
    """The rank group of each result compared in ``column_key`` of ``task``'s table.

    ``compared`` is the SHA-256 of the compared results' ids, sorted and joined by commas; ``ranks`` maps each
    id (as a string: JSON keys are strings) to its group, 1 for the best; ``detectable`` is the column's
    smallest detectable difference (:func:`nlpbench.platform.ranks.smallest_difference`), NULL without two
    comparable results.
    """

    __tablename__ = "rank_groups"
    __table_args__ = (UniqueConstraint("task", "column_key", "compared"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task: Mapped[str] = mapped_column(String(40))
    column_key: Mapped[str] = mapped_column(String(130))
    compared: Mapped[str] = mapped_column(String(64))
    ranks: Mapped[dict[str, int]] = mapped_column(Json)
    detectable: Mapped[float | None] = mapped_column(Float, nullable=True)
    computed_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


def forget_results(session: Session, task: str, result_ids: Collection[int]) -> None:
    """Delete the stored groups of every column of ``task`` that ranks one of ``result_ids``, results about to be
    deleted: SQLite gives a new row the largest id plus one, so a result stored after them may take one of their
    ids, and their groups, keyed by the ids compared, would pass for its own."""
    deleted = {str(result) for result in result_ids}
    for row in session.scalars(select(RankGroups).where(RankGroups.task == task)):
        if not deleted.isdisjoint(row.ranks):
            session.delete(row)
