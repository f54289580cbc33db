"""The stored confidence interval of each overall value of a result, computed once from its per-document counts."""

from __future__ import annotations

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from nlpbench.store.models import Base


class ResultInterval(Base):
    """``metric``'s ``field`` for one annotation type of a result: its value, and its bootstrap interval.

    ``ranked`` marks the task's ranking value (one per annotation type); a
    primary value that the per-document counts do not determine has no interval
    (``low`` and ``high`` NULL, ``method`` ``none``).
    """

    __tablename__ = "result_intervals"
    __table_args__ = (
        Index("ix_result_intervals_result", "result_id"),
        Index("ix_result_intervals_ranked", "ranked", "result_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    result_id: Mapped[int] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"))
    annotation_type: Mapped[str] = mapped_column(String(40))
    metric: Mapped[str] = mapped_column(String(60))
    field: Mapped[str] = mapped_column(String(20))
    ranked: Mapped[bool] = mapped_column(Boolean, default=False)
    #: The value the result reports; ``estimate`` is the statistic of the summed counts.
    value: Mapped[float] = mapped_column(Float)
    estimate: Mapped[float] = mapped_column(Float)
    low: Mapped[float | None] = mapped_column(Float, nullable=True)
    high: Mapped[float | None] = mapped_column(Float, nullable=True)
    confidence: Mapped[float] = mapped_column(Float)
    method: Mapped[str] = mapped_column(String(20))
    resamples: Mapped[int] = mapped_column(Integer)
    documents: Mapped[int] = mapped_column(Integer)


def of_result(session: Session, result_id: int) -> list[ResultInterval]:
    """The stored interval rows of a result, in the order they were computed."""
    return list(
        session.scalars(select(ResultInterval).where(ResultInterval.result_id == result_id).order_by(ResultInterval.id))
    )
