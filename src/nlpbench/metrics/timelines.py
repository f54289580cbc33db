"""ChemoTimelines 2024 scores: one patient's timeline to counts, counts to scores.

For one patient with gold tuples G and predicted tuples P (lists: a repeated
tuple counts as often as it occurs), in a mode (:class:`~nlpbench.model.timelines.Mode`):

1. each date becomes the key its mode compares (a
   :class:`~nlpbench.metrics.timex.Scale`); in ``month`` and ``year`` each list is
   then de-duplicated, and a *generic* mention (a chemo that starts with
   ``chemo``) is dropped when another tuple has its label and date;
2. a tuple is *found* in a list that holds the same chemo and label with a date
   that shares a unit with its own; TP = predicted tuples found in gold,
   FP = predicted tuples not found, FN = gold tuples not found in P;
3. ``strict``: an FP that shares chemo and date with an FN is dropped, so the
   mistake counts once, as the FN;
4. ``day``, ``month``, ``year``: an FP is *rescued* (counted as a TP) when

   - the *range rule* holds: its date lies within its chemo's gold range, from
     the earliest ``begins-on`` to the latest ``ends-on`` date (both needed),
     unless it is an ``ends-on`` not after the range's start or a ``begins-on``
     not before its end; or
   - the *label rule* holds: gold has its chemo and date with ``contains-1``
     when it says ``begins-on`` or ``ends-on``, or with ``begins-on`` or
     ``ends-on`` when it says ``contains-1`` (never begins-on for ends-on);

   an FN is rescued (dropped) by the same rules against the prediction; an FP
   not rescued that shares chemo and date with an FN is dropped.

Scores per patient: P = TP/(TP+FP), R = TP/(TP+FN), F1 = 2·P·R/(P+R), each 0
when its denominator is 0; a patient with empty gold scores 1 when nothing is
predicted for it, else 0 (its predictions count as FP). Micro: the same over
the summed counts. Type A: the mean of the patients' values; Type B: the mean
over patients with non-empty gold; official score: (Type A F1 + Type B F1) / 2.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, filterfalse
from operator import itemgetter
from typing import Any, cast

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.timex import OnFirstUse, Scale, TimexError, UnitScale
from nlpbench.model import BEGINS_ON, CONTAINS, ENDS_ON
from nlpbench.model.timelines import Mode

#: A tuple as read: (chemo, label, date), a plain tuple or a :class:`~nlpbench.model.TimelineTuple`.
Fields = tuple[str, str, str]

#: A tuple as a mode compares it: (chemo, label, date key).
Keyed = tuple[str, str, Any]

#: A generic mention: eval_timeline.py's ``chemo.startswith("chemo")`` (so ``Chemotherapy`` is specific).
GENERIC_PREFIX = "chemo"

#: The label rule: which gold label vouches for a predicted one, and back.
_RELABEL = {BEGINS_ON: (CONTAINS,), ENDS_ON: (CONTAINS,), CONTAINS: (BEGINS_ON, ENDS_ON)}

#: The labels whose dates make a chemo's range: exactly these spellings, as in eval_timeline.py.
_RANGE_LABELS = frozenset({BEGINS_ON, ENDS_ON})

#: The range rule's exclusions test these spellings, as eval_timeline.py does.
_ENDS = frozenset({ENDS_ON, ENDS_ON.upper()})
_BEGINS = frozenset({BEGINS_ON, BEGINS_ON.upper()})


@dataclass(frozen=True, slots=True)
class TimelineRules:
    """How timelines are compared; a profile fills these in.

    - ``mode``: strict, or relaxed to the day, month or year;
    - ``scale``: how that mode reads and compares dates;
    - ``casefold_labels``: labels are compared case-insensitively;
    - ``script_arithmetic``: F1 = 2·P·R/(P+R) from the float P and R and means
      summed left to right, as eval_timeline.py computes them (otherwise
      F1 = 2·TP/(2·TP+FP+FN) and exactly rounded means);
    - ``generic``: whether a chemo is a generic mention, noted for each chemo on its first lookup (one
      dict lookup per tuple instead of a ``startswith`` call: 1.5 % of the instructions of a month-mode
      command); rules made for one run hold the chemos of one run.
    """

    mode: Mode
    scale: Scale
    casefold_labels: bool = False
    script_arithmetic: bool = False
    generic: OnFirstUse = field(default_factory=lambda: OnFirstUse(_is_generic), compare=False, repr=False)


def timeline_counts(gold: Sequence[Fields], pred: Sequence[Fields], rules: TimelineRules) -> PRF:
    """TP, FP and FN of one patient (see the module docstring); empty gold gives FP = len(pred).

    Raises :class:`~nlpbench.metrics.timex.TimexError` (with its ``side``) for a
    date the scale cannot read; every date of a patient with gold is read, in
    every mode, as eval_timeline.py does.
    """
    if not gold:
        return PRF(0, len(pred), 0)
    if rules.casefold_labels:
        gold = [(c, label.casefold(), d) for c, label, d in gold]
        pred = [(c, label.casefold(), d) for c, label, d in pred]
    scale, mode = rules.scale, rules.mode
    dates = _EXACT if scale.exact else _UnitDates(cast(UnitScale, scale))  # not exact: it has units
    side = "gold"
    gold_keyed: Collection[Keyed]
    pred_keyed: Collection[Keyed]
    try:
        gold_keyed = scale.keyed(gold)
        side = "pred"
        pred_keyed = scale.keyed(pred)
    except TimexError as error:
        raise error.on(side) from None
    if mode in (Mode.month, Mode.year):
        generic = rules.generic
        gold_keyed, pred_keyed = dates.summarised(gold_keyed, generic), dates.summarised(pred_keyed, generic)
    in_gold, in_pred = dates.finder(gold_keyed), dates.finder(pred_keyed)
    false_pos, false_neg = list(filterfalse(in_gold, pred_keyed)), list(filterfalse(in_pred, gold_keyed))
    tp = len(pred_keyed) - len(false_pos)

    if mode is Mode.strict:
        return PRF(tp, len(false_pos) - dates.sharing(false_pos, dates.chemo_dates(false_neg)), len(false_neg))

    # relaxed: a rescued FP is a TP, an FP not rescued that shares chemo and date with an FN is dropped,
    # and a rescued FN is dropped
    kept = _unrescued(false_pos, gold, in_gold, scale, ("gold", "pred"))
    missed = _unrescued(false_neg, pred, in_pred, scale, ("pred", "gold"))
    shared = dates.sharing(kept, dates.chemo_dates(false_neg)) if kept and false_neg else 0
    return PRF(tp + len(false_pos) - len(kept), len(kept) - shared, len(missed))


class _Dates(ABC):
    """Finds tuples by chemo, label and date, as a scale says dates match."""

    @abstractmethod
    def finder(self, keyed: Collection[Keyed]) -> Callable[[Keyed], bool]:
        """Whether an item is found in ``keyed``: the same chemo and label, and a matching date."""

    @abstractmethod
    def chemo_dates(self, keyed: Iterable[Keyed]) -> set[tuple[str, Any]]:
        """What :meth:`sharing` looks up: the chemos and dates of ``keyed``."""

    @abstractmethod
    def sharing(self, keyed: list[Keyed], chemo_dates: set[tuple[str, Any]]) -> int:
        """How many items of ``keyed`` share their chemo and a matching date with ``chemo_dates``."""

    @abstractmethod
    def crowded(self, unique: dict[Keyed, None], generic: list[Keyed]) -> set[Keyed]:
        """The ``generic`` items whose label and a matching date another item of ``unique`` has."""

    def summarised(self, keyed: Iterable[Keyed], is_generic: Mapping[str, bool]) -> dict[Keyed, None]:
        """The items de-duplicated (first occurrence kept), as the keys of a dict, without the generic mentions
        (``is_generic[chemo]``) that share label and date with another item."""
        unique = dict.fromkeys(keyed)
        generic = [item for item in unique if is_generic[item[0]]]
        for item in self.crowded(unique, generic) if generic else ():
            del unique[item]
        return unique


class _UnitDates(_Dates):
    """Dates that match when their keys share a unit of the scale (intervals that overlap)."""

    def __init__(self, scale: UnitScale):
        self.units = scale.units

    def finder(self, keyed: Collection[Keyed]) -> Callable[[Keyed], bool]:
        units = self.units
        index = {(chemo, label, unit) for chemo, label, key in keyed for unit in units(key)}

        def found(item: Keyed) -> bool:
            chemo, label, key = item
            return any((chemo, label, unit) in index for unit in units(key))

        return found

    def chemo_dates(self, keyed: Iterable[Keyed]) -> set[tuple[str, Any]]:
        return {(chemo, unit) for chemo, _, key in keyed for unit in self.units(key)}

    def sharing(self, keyed: list[Keyed], chemo_dates: set[tuple[str, Any]]) -> int:
        units = self.units
        return sum(any((chemo, unit) in chemo_dates for unit in units(key)) for chemo, _, key in keyed)

    def crowded(self, unique: dict[Keyed, None], generic: list[Keyed]) -> set[Keyed]:
        counts = Counter((label, unit) for _, label, key in unique for unit in self.units(key))
        return {item for item in generic if any(counts[item[1], unit] > 1 for unit in self.units(item[2]))}


class _ExactDates(_Dates):
    """Dates that match only when their keys are equal: plain set lookups."""

    def finder(self, keyed: Collection[Keyed]) -> Callable[[Keyed], bool]:
        # summarised items come in a dict, which answers membership as fast as a set
        return (keyed if isinstance(keyed, dict) else set(keyed)).__contains__

    def chemo_dates(self, keyed: Iterable[Keyed]) -> set[tuple[str, Any]]:
        return set(map(_CHEMO_DATE, keyed))

    def sharing(self, keyed: list[Keyed], chemo_dates: set[tuple[str, Any]]) -> int:
        return sum(map(chemo_dates.__contains__, map(_CHEMO_DATE, keyed)))

    def crowded(self, unique: dict[Keyed, None], generic: list[Keyed]) -> set[Keyed]:
        # only the items on the date of a generic item can share its label and date
        dates = {item[2] for item in generic}
        near = list(map(_LABEL_DATE, compress(unique, map(dates.__contains__, map(_DATE, unique)))))
        if len(near) == len(generic) and len(set(near)) == len(near):  # no two share label and date: common
            return set()
        return {item for item in generic if near.count(item[1:]) > 1}


def _is_generic(chemo: str) -> bool:
    return chemo.startswith(GENERIC_PREFIX)


_CHEMO, _DATE = itemgetter(0), itemgetter(2)
_LABEL_DATE, _CHEMO_DATE = itemgetter(1, 2), itemgetter(0, 2)


_EXACT = _ExactDates()


def _unrescued(
    items: list[Keyed],
    tuples: Sequence[Fields],
    found: Callable[[Keyed], bool],
    scale: Scale,
    sides: tuple[str, str],
) -> list[Keyed]:
    """The ``items`` that neither the range rule (against the ranges of ``tuples``) nor the label rule rescues.

    ``found`` tells whether the other side holds an item (keyed as ``items`` are); ``sides`` names the
    sides of ``tuples`` and of ``items``, for errors.
    """
    if not items:
        return items
    ranges = _ranges(tuples, items, scale, sides[0])
    kept = []
    for item in items:
        chemo, label, key = item
        if chemo in ranges and _in_range(item, ranges[chemo], scale, sides[1]):
            continue
        for other in _RELABEL.get(label, ()):
            if found((chemo, other, key)):
                break
        else:
            kept.append(item)
    return kept


def _ranges(tuples: Sequence[Fields], items: list[Keyed], scale: Scale, side: str) -> dict[str, tuple[Any, Any]]:
    """The (earliest begins-on, latest ends-on) of each chemo of ``items`` that has both in ``tuples``."""
    chemos = set(map(_CHEMO, items))
    starts: dict[str, Any] = {}
    ends: dict[str, Any] = {}
    first, last = scale.first, scale.last
    chemo = ""
    try:
        for chemo, label, value in tuples:
            if chemo in chemos:
                if label == BEGINS_ON:
                    point = first(value)
                    if chemo not in starts or point < starts[chemo]:
                        starts[chemo] = point
                elif label == ENDS_ON:
                    point = last(value)
                    if chemo not in ends or point > ends[chemo]:
                        ends[chemo] = point
    except TypeError as error:  # a date with a time zone among dates without
        dates = ", ".join(d for c, label, d in tuples if c == chemo and label in _RANGE_LABELS)
        raise TimexError(dates, f"the range of {chemo} cannot be ordered ({error})", side) from None
    return {chemo: (start, ends[chemo]) for chemo, start in starts.items() if chemo in ends}


def _in_range(item: Keyed, bounds: tuple[Any, Any], scale: Scale, side: str) -> bool:
    """The range rule: ``item`` lies within ``bounds`` and is no ends-on at its start or begins-on at its end."""
    chemo, label, key = item
    start, end = bounds
    first, last = scale.span(key)
    try:
        if (label in _ENDS and last <= start) or (label in _BEGINS and first >= end):
            return False
        return start <= first and last <= end
    except TypeError as error:  # a date with a time zone against a range without, or back
        raise TimexError(str(key), f"cannot be ordered against the range of {chemo} ({error})", side) from None


def timeline_values(counts: PRF, *, script_arithmetic: bool = False) -> tuple[float, float, float]:
    """(precision, recall, F1) of counts, each 0 on an empty denominator (see :class:`TimelineRules`)."""
    precision, recall = counts.precision, counts.recall
    if not script_arithmetic:
        return precision, recall, counts.f1
    return precision, recall, (2 * (precision * recall) / (precision + recall) if precision + recall else 0.0)


def patient_values(counts: PRF, gold_size: int, *, script_arithmetic: bool = False) -> tuple[float, float, float]:
    """A patient's (precision, recall, F1); with empty gold 1 if nothing was predicted, else 0."""
    if gold_size == 0:
        return (0.0, 0.0, 0.0) if counts.fp else (1.0, 1.0, 1.0)
    return timeline_values(counts, script_arithmetic=script_arithmetic)


def macro_values(
    values: Sequence[tuple[float, float, float]], *, script_arithmetic: bool = False
) -> tuple[float, float, float]:
    """The means of the patients' (precision, recall, F1); (0, 0, 0) for no patient.

    ``script_arithmetic`` sums left to right in the order given, as
    eval_timeline.py does (``sum(values) / n``); otherwise ``math.fsum``.
    """
    if not values:
        return 0.0, 0.0, 0.0
    total = sum if script_arithmetic else math.fsum
    precision, recall, f1 = (total([value[i] for value in values]) / len(values) for i in range(3))
    return precision, recall, f1


def official_score(type_a_f1: float, type_b_f1: float) -> float:
    """The ChemoTimelines 2024 leaderboard score: (Type A F1 + Type B F1) / 2."""
    return (type_a_f1 + type_b_f1) / 2
