"""The stored confidence interval of each overall value of a result, computed once from its per-document counts."""

from __future__ import annotations

from sqlalchemy import Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from nlpbench.store.models import Base


class ResultInterval(Base):
    """``estimate`` of ``metric``'s ``field`` for one annotation type of a result, and its bootstrap interval."""

    __tablename__ = "result_intervals"
    __table_args__ = (Index("ix_result_intervals_result", "result_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    result_id: Mapped[int] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"))
    annotation_type: Mapped[str] = mapped_column(String(40))
    metric: Mapped[str] = mapped_column(String(60))
    field: Mapped[str] = mapped_column(String(20))
    estimate: Mapped[float] = mapped_column(Float)
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)
    confidence: Mapped[float] = mapped_column(Float)
    method: Mapped[str] = mapped_column(String(20))
    resamples: Mapped[int] = mapped_column(Integer)
    documents: Mapped[int] = mapped_column(Integer)
