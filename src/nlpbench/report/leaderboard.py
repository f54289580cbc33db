"""Leaderboards: tools scored on the same data, a row per tool and an F1 per annotation type.

The inputs are the reports each tool got per annotation type; the ``micro``
column sums their counts first (F1 = 2·TP / (2·TP + FP + FN) over all types),
so a tool that finds many dates cannot hide weak names behind a mean.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from nlpbench.report.model import Report, Row
from nlpbench.report.render import templates


def leaderboard(
    reports: Mapping[str, Mapping[str, Report]], metric: str, extra: Mapping[str, Row] | None = None
) -> list[Row]:
    """``{"tool", **extra, <label>: F1, …, "micro": F1}`` per tool, best micro F1 first."""
    rows = []
    for tool, by_label in reports.items():
        row: Row = {"tool": tool, **(extra or {}).get(tool, {})}
        tp = fp = fn = 0
        for label, report in by_label.items():
            score = report.score(metric)
            row[label] = score["f1"]
            tp, fp, fn = tp + score["tp"], fp + score["fp"], fn + score["fn"]
        row["micro"] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
        rows.append(row)
    return sorted(rows, key=lambda r: (-r["micro"], r["tool"]))


def in_context(text: str, start: int, end: int, width: int = 50) -> tuple[str, str, str]:
    """``(before, span, after)``: the span with up to ``width`` characters each side, line breaks as spaces."""

    def flat(piece: str) -> str:
        return re.sub(r"\s", " ", piece)

    before = ("…" if start > width else "") + flat(text[max(0, start - width) : start])
    after = flat(text[end : end + width]) + ("…" if end + width < len(text) else "")
    return before, flat(text[start:end]), after


def leaderboard_html(
    title: str,
    boards: Mapping[str, Sequence[Row]],
    reports: Mapping[str, Mapping[str, Report]],
    texts: Mapping[str, str],
    details: Mapping[str, Any] | None = None,
) -> str:
    """A self-contained page: the leaderboards, then each tool's scores per type with errors in context.

    Every F1 in a leaderboard links to the table it comes from.
    """
    return (
        templates()
        .get_template("leaderboard.html")
        .render(
            title=title,
            boards=boards,
            reports=reports,
            texts=texts,
            details=details or {},
            in_context=in_context,
        )
    )
