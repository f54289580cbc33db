"""A column's smallest detectable difference, and the ranks a page shows: tools closer than it are tied.

Every result's 95 % interval is a bootstrap over the column's documents (:mod:`nlpbench.platform.intervals`),
so its half-width ``h = (high - low) / 2`` is ``z · σ`` with ``z = 1.96`` and ``σ`` the standard error of the
tool's score at the dataset's size. The paired bootstrap of two tools ``a`` and ``b`` on the same documents
(:func:`nlpbench.stats.paired_bootstrap`) resamples ``a - b``, whose standard error is
``sqrt(σa² + σb² - 2·cov(a, b))`` — at most ``sqrt(σa² + σb²)``, since two tools scoring the same notes err
together more often than not. The smallest difference it finds at 95 % is therefore at most::

    δ = z · sqrt(σ² + σ²) = √2 · h̃

with ``h̃`` the median half-width of the column's stored intervals: what the dataset's size allows any two
typical tools to be told apart by. It is computed from the stored bounds (no resampling per request).

:func:`shown_ranks` makes it a rule of the page: walking the column's cells from the best, a cell shares the
shown rank of the group it follows when the stored rank groups (:mod:`nlpbench.platform.ranks`) tie it to
that group's first cell or when it is within ``δ`` of that cell; otherwise it opens the next rank. Tied cells
are listed by team and tool, never by when they were submitted.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from nlpbench.platform.standings import Cell, Table

#: ``√2``: two tools' independent standard errors added in quadrature.
SQRT2 = math.sqrt(2.0)


def smallest_difference(cells: Sequence[Cell]) -> float | None:
    """``δ = √2 · median((high - low) / 2)`` over the cells with an interval; None without one."""
    halves = [(cell.high - cell.low) / 2 for cell in cells if cell.low is not None and cell.high is not None]
    return SQRT2 * statistics.median(halves) if halves else None


def column_differences(table: Table) -> dict[str, float | None]:
    """Each column's :func:`smallest_difference`, over the cells the table shows."""
    return {
        key: smallest_difference([line.cells[key] for line in table.lines if key in line.cells])
        for key in table.columns
    }


def shown_ranks(cells: Sequence[Cell], detectable: float | None) -> dict[int, int | None]:
    """Each cell's shown rank by ``id(cell)`` (see the module); None for every cell while the column has no
    stored rank groups."""
    if not cells or any(cell.rank is None for cell in cells):
        return {id(cell): None for cell in cells}
    ordered = sorted(cells, key=lambda cell: -cell.value)
    shown: dict[int, int | None] = {}
    first, rank = ordered[0], 1
    for cell in ordered:
        tied = cell.rank == first.rank or (detectable is not None and first.value - cell.value < detectable)
        if not tied:
            first, rank = cell, rank + 1
        shown[id(cell)] = rank
    return shown


def apply(table: Table) -> dict[str, float | None]:
    """Give every cell of ``table`` its shown rank (in place of its stored group); each column's ``δ``."""
    found = column_differences(table)
    for key in table.columns:
        cells = [line.cells[key] for line in table.lines if key in line.cells]
        ranks = shown_ranks(cells, found[key])
        for cell in cells:
            cell.rank = ranks[id(cell)]
    return found
