"""Leaderboards: tools scored on the same data, a row per tool and an F1 per annotation type.

The inputs are the reports each tool got per annotation type; the ``micro``
column sums their counts first (F1 = 2·TP / (2·TP + FP + FN) over all types),
so a tool that finds many dates cannot hide weak names behind a mean. A type
a tool does not serve (a date annotator's names) is :data:`NOT_SERVED`, not
0, and its micro F1 sums the types it serves; a tool whose run failed is a
row of its own at the bottom, its name marked ``(failed)`` and no scores.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from nlpbench.report.model import Report, Row
from nlpbench.report.render import templates

NOT_SERVED = "—"


def leaderboard(
    reports: Mapping[str, Mapping[str, Report]],
    metric: str,
    extra: Mapping[str, Row] | None = None,
    *,
    labels: Sequence[str] = (),
    failed: Sequence[str] = (),
) -> list[Row]:
    """``{"tool", **extra, <label>: F1, …, "micro": F1}`` per tool, best micro F1 first, then the ``failed`` tools.

    ``labels`` are the columns (by default, the types of the reports); a tool
    without a report for one has :data:`NOT_SERVED` there.
    """
    columns = list(labels) or list(dict.fromkeys(label for by_label in reports.values() for label in by_label))
    rows = []
    for tool, by_label in reports.items():
        row: Row = {"tool": tool, **(extra or {}).get(tool, {})}
        tp = fp = fn = 0
        for label in columns:
            if label not in by_label:
                row[label] = NOT_SERVED
                continue
            score = by_label[label].score(metric)
            row[label] = score["f1"]
            tp, fp, fn = tp + score["tp"], fp + score["fp"], fn + score["fn"]
        row["micro"] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
        rows.append(row)
    keys = rows[0].keys() if rows else ["tool", *columns, "micro"]
    broken = [{key: f"{tool} (failed)" if key == "tool" else NOT_SERVED for key in keys} for tool in failed]
    return sorted(rows, key=lambda r: (-r["micro"], r["tool"])) + broken


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
