"""The report every scoring task returns: the JSON output contract of DESIGN.md.

``{"task", "profile", "inputs", "scores": [rows], "per_document": [rows],
"warnings": [...]}``, plus ``"errors"`` when false positives and negatives
were asked for. A row names its ``metric``, may name a ``label`` (a subtype
slice), an ``average`` (``macro``) or a ``document``, and carries the counts it
was computed from next to its values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]
#: The fields that make a row a slice of the whole — a subtype, an average, a document — not an overall row.
SLICE_KEYS = ("label", "average", "document")


@dataclass
class Report:
    task: str
    profile: str
    inputs: dict[str, Any]
    scores: list[Row] = field(default_factory=list)
    per_document: list[Row] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[Row] | None = None
    #: What the report covers beyond its task and profile (the annotation types a run found and scored),
    #: named in the title of every rendering for people; not part of the JSON, whose inputs say it.
    subject: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "task": self.task,
            "profile": self.profile,
            "inputs": self.inputs,
            "scores": self.scores,
            "per_document": self.per_document,
            "warnings": self.warnings,
        }
        if self.errors is not None:
            data["errors"] = self.errors
        return data

    def to_json(self) -> str:
        """The report as ``nlpbench score … --format json`` prints it."""
        from nlpbench.report.render import to_json

        return to_json(self)

    def __str__(self) -> str:
        """The report as ``nlpbench score …`` prints it: plain tables of the overall rows, then the slices."""
        from nlpbench.report.render import to_table

        return to_table(self)

    def to_frame(self, rows: str = "scores") -> Any:
        """The ``scores`` (``per_document``, ``errors``) rows as a pandas DataFrame, a column per field.

        pandas is an optional extra: ``pip install 'nlpbench[frame]'``.
        """
        if rows not in ("scores", "per_document", "errors"):
            raise ValueError(f"rows is scores, per_document or errors, not {rows!r}")
        try:
            import pandas
        except ImportError:
            raise ImportError("Report.to_frame needs pandas: pip install 'nlpbench[frame]'") from None
        return pandas.DataFrame(getattr(self, rows) or [])

    def score(self, metric: str, **match: Any) -> Row:
        """The first score row of ``metric`` whose fields equal ``match`` (``label=None`` = overall)."""
        match.setdefault("label", None)
        match.setdefault("average", None)
        for row in self.scores:
            if row["metric"] == metric and all(row.get(k) == v for k, v in match.items()):
                return row
        raise KeyError(f"no {metric} row matching {match}")


def overall_rows(report: Report) -> list[Row]:
    """The report's overall score rows: those naming none of :data:`SLICE_KEYS`."""
    return [row for row in report.scores if not any(row.get(key) is not None for key in SLICE_KEYS)]
