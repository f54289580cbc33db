"""A leaderboard column's rank groups, computed and stored in the transaction that stores a result.

Each column of a task's table (:mod:`nlpbench.platform.standings`, under
either pick) ranks the results it compares: the cells are sorted by value,
and each group's best is tested against the others with a paired bootstrap
over the documents (:data:`TEST_RESAMPLES` resamples of the per-document
counts of the primary value; a result pooled from data sites resampled within
each site, as its interval is), the p-values Holm-corrected
(:func:`nlpbench.stats.rank_groups`); a result whose difference from the
group's best is not significant shares its group. With the groups goes the
column's smallest detectable difference (:func:`smallest_difference`, from the
same paired bootstrap at the dataset's size). A ranking reads each result's primary value from the rows of
its metric alone and derives it once for every column that shows it, and the tests of a column share one draw
of their resamples (:class:`Shared`). That is seconds of work for
thousands of notes, so it is done once per set of results, when they change:
:func:`rank` computes the groups of every column of a task whose compared
results (:func:`nlpbench.platform.standings.compared`) have no stored groups
yet, stores them (:class:`nlpbench.store.ranks.RankGroups`) and forgets the
groups of results no column shows any more. The worker calls it in the
transaction that moves a submission to SCORED, ``nlpbench rescore`` in the
one that replaces a result, so a page reads the groups of the results it
shows and never computes them.

:func:`rank` runs under a lock per task — an advisory transaction lock on
PostgreSQL, the write lock that every SQLite writer holds from its start — so
that two transactions storing results of the same task rank one after the
other, the second seeing the first's result (READ COMMITTED): the groups
stored last are those of the final set of results. :func:`refresh` fills in
what results stored before this (or by another path) lack: their intervals,
and the groups of columns that were never ranked.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise

from sqlalchemy import Select, delete, select, text
from sqlalchemy.orm import Session

from nlpbench.platform import scoring, tasks
from nlpbench.platform.pooling import strata
from nlpbench.platform.standings import Cell, shown_columns
from nlpbench.stats import paired_bootstrap, rank_groups
from nlpbench.stats.paired import PairedTest
from nlpbench.stats.report import Derivation
from nlpbench.stats.resample import Draws
from nlpbench.store import Store
from nlpbench.store.ranks import RankGroups
from nlpbench.store.submissions import Result, Submission

#: Paired bootstrap resamples behind a rank group.
TEST_RESAMPLES = 1000


@dataclass(frozen=True)
class Ranked:
    """A column's rank groups (each result id's, 1 for the best) and its smallest detectable difference."""

    groups: dict[int, int]
    detectable: float | None


#: ``(column key, digest of the results compared)`` → the column's :class:`Ranked`.
Groups = dict[tuple[str, str], Ranked]
#: What a cell's value is derived under: ``(result id, annotation type, metric, field)``.
Derived = tuple[int, str, str, str]


def stored(task: str) -> Select[RankGroups]:
    """The query of the task's stored rank groups."""
    return select(RankGroups).where(RankGroups.task == task)


def rank(
    session: Session, task: str, ready: Groups | None = None, derived: Mapping[Derived, Derivation] | None = None
) -> int:
    """Store the rank groups of every column of ``task`` (either pick) whose compared results have none, and
    delete the stored groups of results no column compares any more; how many columns were ranked.

    Runs under the task's lock (see the module), inside the caller's transaction. Groups in ``ready``, computed
    beforehand from a snapshot, are stored as they are when their column still compares the same results;
    any other column is computed here. ``derived``: derivations already at hand (a result just stored, from its
    counts: :attr:`nlpbench.platform.scoring.Scored.derived`), read from the rows of none of them.
    """
    _lock(session, task)
    wanted = shown_columns(session, task)
    held = {(row.column_key, row.compared): row for row in session.scalars(stored(task))}
    ready = ready or {}
    shared = Shared(derived)
    computed = {
        found: ready[found] if found in ready else column_groups(session, cells, shared)
        for found, cells in wanted.items()
        if found not in held
    }
    session.add_all(
        RankGroups(
            task=task,
            column_key=key,
            compared=digest,
            ranks={str(result): group for result, group in ranked.groups.items()},
            detectable=ranked.detectable,
        )
        for (key, digest), ranked in computed.items()
    )
    for found, row in held.items():
        if found not in wanted:
            session.execute(delete(RankGroups).where(RankGroups.id == row.id))
    session.flush()
    return len(computed)


def _lock(session: Session, task: str) -> None:
    """Wait for the task's ranking lock, held to the end of the transaction (SQLite: the write lock, already held)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"rank-groups/{task}"})


def column_groups(session: Session, cells: list[Cell], shared: Shared | None = None) -> Ranked:
    """Each cell's result's rank group among the cells of one column, 1 for the best, and the column's
    :func:`smallest_difference`.

    Two results whose primary value is not derived from per-document counts over the same documents are never
    tied (p-value 0) and have no paired interval. ``shared``: what the columns of one ranking share (each
    result's derivation, the resamples' weights), computed once for them all.
    """
    shared = shared if shared is not None else Shared()
    tables = {cell.result_id: shared.derivation(session, cell) for cell in cells}
    scores = {cell.result_id: cell.value for cell in cells}
    tested: dict[tuple[int, int], PairedTest | None] = {}

    def test(a: int, b: int) -> PairedTest | None:
        if (a, b) not in tested:
            first, second = tables[a], tables[b]
            if first is None or second is None or set(first.documents) != set(second.documents):
                tested[a, b] = None  # not comparable document by document
            else:
                position = {document: i for i, document in enumerate(second.documents)}
                aligned = second.counts[[position[d] for d in first.documents]]
                # a result pooled from data sites: each site's documents resampled within the site
                blocks = strata(first.documents) if scoring.pooled_by_site(session.get_one(Result, a)) else ()
                tested[a, b] = paired_bootstrap(
                    first.counts, aligned, first.statistic, resamples=TEST_RESAMPLES, draws=shared.draws, strata=blocks
                )
        return tested[a, b]

    def p_value(best: int, other: int) -> float:
        found = test(best, other)
        return 0.0 if found is None else found.p_value

    return Ranked(rank_groups(scores, p_value), smallest_difference(scores, test))


def smallest_difference(scores: Mapping[int, float], test: Callable[[int, int], PairedTest | None]) -> float | None:
    """The column's smallest detectable difference: the median half-width of the paired bootstrap intervals of
    the differences between results next to each other by value; None without such a pair.

    With the results sorted by value (greatest first, then by id), ``r_1 … r_n``, and ``[L_i, U_i]`` the
    95 % percentile interval of ``θ(r_i) − θ(r_{i+1})`` over :data:`TEST_RESAMPLES` paired resamples of the
    column's documents (:func:`nlpbench.stats.paired_bootstrap`, seed 0)::

        δ = median_i (U_i − L_i) / 2

    A difference of two tools is significant at 95 % about when it exceeds its interval's half-width, so
    ``δ`` is the smallest difference the dataset's size lets the paired test find between two neighbouring
    tools. Pairs ``test`` finds not comparable (None) are left out.
    """
    ordered = sorted(scores, key=lambda result: (-scores[result], result))
    halves = [
        (found.high - found.low) / 2
        for a, b in pairwise(ordered)
        if (found := test(a, b)) is not None and found.low is not None and found.high is not None
    ]
    return statistics.median(halves) if halves else None


class Shared:
    """What the columns of one ranking share, each computed once: a result's primary derivation (a result
    shows in several columns: each pick's, a site's and the pooled one) and the paired tests' resample weights
    (every test over ``n`` documents draws the same ones, :class:`~nlpbench.stats.resample.Draws`)."""

    def __init__(self, derived: Mapping[Derived, Derivation] | None = None) -> None:
        self.draws = Draws()
        self._derived: dict[Derived, Derivation | None] = dict(derived or {})

    def derivation(self, session: Session, cell: Cell) -> Derivation | None:
        """The derivation of the cell's value from its result's per-document counts (None: they do not
        determine it), read from the rows that value needs (:func:`nlpbench.platform.scoring.result_derivation`)."""
        key: Derived = (cell.result_id, cell.annotation_type, cell.metric, cell.field)
        if key not in self._derived:
            result = session.get_one(Result, cell.result_id)
            submission = session.get_one(Submission, cell.submission.id)
            found = scoring.result_derivation(session, submission, result, cell.annotation_type, *key[2:])
            self._derived[key] = found
        return self._derived[key]


@dataclass(frozen=True)
class Refreshed:
    """What :func:`refresh` computed and stored."""

    intervals: int  # results given the intervals they were stored without
    columns: int  # columns whose rank groups were computed


def refresh(store: Store) -> Refreshed:
    """Compute and store what pages read but never compute and results stored before the worker stored it lack:
    the intervals of results stored without them, and the rank groups of every column never ranked.

    The groups are computed in read-only snapshots and handed to :func:`rank` in a short writing transaction (a
    SQLite writer holds the one write lock), which stores those still wanted: a worker that stored a result
    meanwhile has ranked its columns, and its groups stay.
    """
    with store.session(readonly=True) as session:
        lacking = scoring.lacking_intervals(session)
    filled = 0
    if lacking:
        with store.session() as session:
            filled = scoring.ensure_intervals(session)
    ranked = 0
    for task in tasks.names():
        with store.session(readonly=True) as session:
            wanted = shown_columns(session, task)
            held = {(row.column_key, row.compared) for row in session.scalars(stored(task))}
            shared = Shared()
            ready = {
                found: column_groups(session, cells, shared) for found, cells in wanted.items() if found not in held
            }
        if ready or held - wanted.keys():
            with store.session() as session:
                ranked += rank(session, task, ready)
    return Refreshed(filled, ranked)
