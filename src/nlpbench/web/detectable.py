"""A column's smallest detectable difference, and the ranks a page shows: tools closer than it are tied.

The difference ``δ`` of a column is computed once, with its rank groups, from the paired bootstrap of its
results at the dataset's size (:func:`nlpbench.platform.ranks.smallest_difference`): with the column's
results sorted by value and ``[L_i, U_i]`` the 95 % percentile interval of the difference between the
``i``-th and the next over paired resamples of the documents::

    δ = median_i (U_i − L_i) / 2

the smallest difference the paired test finds between two neighbouring tools. It is stored beside the
groups (:class:`nlpbench.store.ranks.RankGroups`) and read here, never computed per request.

:func:`shown_ranks` makes it a rule of the page: walking the column's cells from the best, a cell shares the
shown rank of the group it follows when the stored rank groups (:mod:`nlpbench.platform.ranks`) tie it to
that group's first cell or when it is within ``δ`` of that cell; otherwise it opens the next rank. Tied cells
are listed by team and tool, never by when they were submitted.
"""

from __future__ import annotations

from collections.abc import Sequence

from nlpbench.platform.standings import Cell, Table


def column_differences(table: Table) -> dict[str, float | None]:
    """Each column's stored ``δ`` (see the module); None for a column not ranked yet or without two comparable
    results."""
    return {key: table.detectable.get(key) for key in table.columns}


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
