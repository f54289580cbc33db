"""A task column's forest plot as inline SVG, written directly (no matplotlib, no script, no style attribute).

One row per tool (or per submission): its 95 % interval as a bar, its point estimate as a dot, its rank
group at the right (``#1`` …, ``–`` while it has none), best first. A baseline (a team the site's
settings name, :attr:`nlpbench.web.app.Settings.baselines`) is drawn grey with a hollow diamond and
labelled ``baseline``. Rows of rank group 1 are drawn dark blue, the others lighter, so the leading group
reads at a glance. Where the column has a smallest detectable difference
(:func:`nlpbench.platform.ranks.smallest_difference`, stored), a bracket of that width under the axis shows it.

Every text goes through :func:`nlpbench.web.board.bounded` and XML escaping: a tool's name cannot
break out of the SVG. Nothing here reads the store: the caller passes the stored values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from nlpbench.web.board import bounded

#: The most rows a forest plot draws (all submissions on request are bounded by it too).
MAX_ROWS = 200
#: The most characters of a row's label.
LABEL = 48
WIDTH, LEFT, RIGHT, ROW, TOP = 900, 330, 60, 22, 30


@dataclass(frozen=True)
class Row:
    """A row of the plot: its label, point estimate, interval, rank group, and whether it is a baseline."""

    label: str
    value: float
    low: float | None
    high: float | None
    rank: int | None
    baseline: bool = False


def _span(rows: Sequence[Row]) -> tuple[float, float]:
    """The axis's range: the rows' intervals widened to tenths, within [0, 1] when they are."""
    lows = [row.low if row.low is not None else row.value for row in rows]
    highs = [row.high if row.high is not None else row.value for row in rows]
    low, high = math.floor(min(lows) * 10) / 10, math.ceil(max(highs) * 10) / 10
    if high - low < 0.1:
        high = low + 0.1
    return low, high


def forest(title: str, rows: Sequence[Row], detectable: float | None = None, ranked: bool = True) -> str:
    """The SVG of ``rows`` (at most :data:`MAX_ROWS`, in the order given) under ``title``; without ``ranked``,
    no rank column (a submission's metrics, each with its interval, are not ranked against each other)."""
    rows = list(rows)[:MAX_ROWS]
    if not rows:
        return ""
    low, high = _span(rows)
    inner = WIDTH - LEFT - RIGHT

    def x(value: float) -> float:
        return round(LEFT + (value - low) / (high - low) * inner, 1)

    height = TOP + ROW * len(rows) + 50
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="forest" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" role="img" aria-label={quoteattr(bounded(title, 2 * LABEL))} font-family="sans-serif" '
        'font-size="12">',
        f'<text x="{LEFT}" y="16" font-weight="bold">{escape(bounded(title, 2 * LABEL))}</text>',
    ]
    bottom = TOP + ROW * len(rows)
    steps = round((high - low) * 10)
    for i in range(steps + 1):
        tick = low + i * (high - low) / steps
        parts.append(f'<line x1="{x(tick)}" y1="{TOP - 4}" x2="{x(tick)}" y2="{bottom}" stroke="#e3e3e3"/>')
        parts.append(f'<text x="{x(tick)}" y="{bottom + 14}" text-anchor="middle">{tick:.1f}</text>')
    for i, row in enumerate(rows):
        y = TOP + ROW * i + ROW / 2
        colour = "#888888" if row.baseline else ("#1f4e79" if row.rank == 1 else "#6f9cc7")
        label = bounded(row.label, LABEL) + (" (baseline)" if row.baseline else "")
        parts.append(
            f'<g class="row{" baseline" if row.baseline else ""}" data-rank="{row.rank or ""}">'
            f"<title>{escape(label)}: {row.value:.3f}"
            + (f" [{row.low:.3f}, {row.high:.3f}]" if row.low is not None and row.high is not None else "")
            + "</title>"
        )
        parts.append(f'<text x="{LEFT - 8}" y="{y + 4}" text-anchor="end">{escape(label)}</text>')
        if row.low is not None and row.high is not None:
            dash = ' stroke-dasharray="4 3"' if row.baseline else ""
            parts.append(
                f'<line class="interval" x1="{x(row.low)}" y1="{y}" x2="{x(row.high)}" y2="{y}" stroke="{colour}" '
                f'stroke-width="4"{dash}/>'
            )
        if row.baseline:
            cx = x(row.value)
            parts.append(
                f'<path class="estimate" d="M{cx} {y - 6}L{cx + 6} {y}L{cx} {y + 6}L{cx - 6} {y}Z" fill="#fff" '
                f'stroke="{colour}" stroke-width="2"/>'
            )
        else:
            parts.append(f'<circle class="estimate" cx="{x(row.value)}" cy="{y}" r="5" fill="{colour}"/>')
        if ranked:
            rank = f"#{row.rank}" if row.rank is not None else "–"
            parts.append(f'<text class="rank" x="{WIDTH - RIGHT + 10}" y="{y + 4}">{rank}</text>')
        parts.append("</g>")
    if detectable is not None and 0 < detectable < high - low:
        y = bottom + 30
        parts.append(
            f'<path class="detectable" d="M{x(low)} {y - 4}V{y}H{x(low + detectable)}V{y - 4}" fill="none" '
            'stroke="#b35900" stroke-width="2"/>'
        )
        parts.append(
            f'<text x="{x(low + detectable) + 6}" y="{y + 4}">smallest detectable difference {detectable:.3f}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
