"""Timeline dates as each scoring mode compares them.

A *scale* reads the date values of one mode (``strict``, ``day``, ``month``,
``year``) and answers what the timeline metrics ask of a date:

- ``keyed(tuples)``: each ``(chemo, label, date)`` with its date replaced by
  its *key*, the date as the mode compares it; equal keys are the same date
  (month and year modes de-duplicate on them);
- ``exact``: keys match only when equal; a scale that is not exact also has
  ``units(key)``, and two of its dates match when their keys share a unit;
- ``span(key)``: the first and last instant of a compared date, for the range
  rule; ``first(value)`` and ``last(value)``: where a gold or predicted
  ``begins-on`` / ``ends-on`` date puts the start or end of a chemo's range;
- ``completed``: the values whose reading took a field from the reference
  date, with what they were read as (always empty when nothing depends on it).

Two readings exist. :class:`ScriptScale` reads dates exactly as the official
ChemoTimelines 2024 ``eval_timeline.py`` does (python-dateutil, ``strptime``
``%W`` weeks, every value one instant); :class:`IsoScale` reads them as ISO
8601 intervals. Both raise :class:`TimexError` for a value they cannot read.
"""

from __future__ import annotations

import calendar
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime, timedelta
from operator import itemgetter
from typing import Any, Protocol

from nlpbench.errors import Kind, NlpbenchError
from nlpbench.model.timelines import Mode


class TimexError(NlpbenchError, ValueError):
    """A date value a scale cannot read, or two dates it cannot order; ``side`` is ``gold`` or ``pred``."""

    kind = Kind.input

    def __init__(self, value: str, reason: str, side: str | None = None):
        self.value, self.reason, self.side = value, reason, side
        super().__init__(f"date {value!r}: {reason}")

    def on(self, side: str) -> TimexError:
        """The same error, said to come from the ``side`` timeline."""
        return TimexError(self.value, self.reason, self.side or side)


class Scale(Protocol):
    """What the timeline metrics ask of the dates of one mode (see the module docstring)."""

    completed: dict[str, datetime]
    exact: bool

    def keyed(self, tuples: Sequence[tuple[str, str, str]]) -> Sequence[tuple[str, str, Any]]: ...

    def span(self, key: Any) -> tuple[Any, Any]: ...

    def first(self, value: str) -> Any: ...

    def last(self, value: str) -> Any: ...


class UnitScale(Scale, Protocol):
    """A scale that is not exact: two of its dates match when their keys share a unit."""

    def units(self, key: Any) -> Iterable[Any]: ...


_DATE = itemgetter(2)


class OnFirstUse(dict):
    """A dict that computes a missing entry with ``compute(key)`` on its first lookup and keeps it.

    A scale keeps what it read of each date value in one: a tuple list is then
    keyed by plain dict lookups, which cost a fraction of a method call each,
    and a value is read (and an unreadable one reported) the first time it is
    looked up, in the order the lookups come.
    """

    def __init__(self, compute: Callable[[Any], Any]):
        super().__init__()
        self.compute = compute

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.compute(key)
        return value


def _read_all(tuples: Sequence[tuple[str, str, str]], keys: OnFirstUse) -> None:
    """Have ``keys`` read each date of ``tuples`` it has not seen, in order (the first unreadable one is reported)."""
    if not all(map(keys.__contains__, map(_DATE, tuples))):
        for _, _, value in tuples:
            keys[value]  # a lookup reads a value not seen before


def _with_keys(tuples: Sequence[tuple[str, str, str]], keys: OnFirstUse) -> list[tuple[str, str, Any]]:
    """Each ``(chemo, label, date)`` as ``(chemo, label, keys[date])``."""
    return [(chemo, label, keys[value]) for chemo, label, value in tuples]


_ISO_WEEK_DATE = re.compile(r"\d{4}-W\d{1,2}-\d", re.IGNORECASE)


class ScriptScale:
    """Dates as ``eval_timeline.py`` (ChemoTimelines 2024) reads them, for one mode.

    - ``w`` is upper-cased; a value with a ``W`` is ``strptime(value + "-1",
      "%Y-W%W-%w")``: the Monday of week ``%W``, where week 1 starts on the
      year's first Monday and week 0 holds the days before it. That is not the
      ISO week (2013-W05 is 2013-02-04; ISO says 2013-01-28), and
      ``YYYY-Www-D`` is refused.
    - any other value is ``dateutil.parser.parse(value)``, which takes a
      missing year, month or day from today at midnight — here from
      ``reference`` — and clips a day the month lacks to its last day.
    - ``strict`` and ``day`` compare values as written (``2013-05-12T10:00``
      is not ``2013-05-12``); ``month`` and ``year`` compare the strings
      ``YYYY-MM`` / ``YYYY`` of the reading, and the range rule reads those
      strings again, so ``2013-05`` falls on the reference date's day.
    - every value is one instant: ``span(key) == (t, t)``.

    ``completed`` collects the values whose reading took a field from the
    reference date that a comparison used, with what they were read as.
    """

    def __init__(self, mode: Mode, reference: date):
        self.mode = Mode(mode)
        self.default = datetime(reference.year, reference.month, reference.day)
        # a second default that differs in every field tells which fields a reading took from the default
        self._probe = datetime(
            2001 if reference.year == 2000 else 2000, 2 if reference.month == 1 else 1, 2 if reference.day == 1 else 1
        )
        self._readings: dict[str, tuple[datetime, tuple[str, ...]]] = {}
        self._keys = OnFirstUse(self._key)
        self.completed: dict[str, datetime] = {}
        self.exact = True
        # first(value) and last(value) are dict lookups, a value read (and a completed one noted) on its first
        # use: the range rule asks for every begins-on and ends-on date of a patient
        self.first = self.last = OnFirstUse(self._used).__getitem__

    def reading(self, value: str) -> tuple[datetime, tuple[str, ...]]:
        """The instant ``eval_timeline.py`` reads ``value`` as, and the fields it took from the reference date."""
        reading = self._readings.get(value)
        if reading is None:
            fast = _FAST.fullmatch(value)
            point = _read_fast(fast, self.default) if fast is not None else None
            if point is None:
                point = _read_slow(value, self.default)
            if fast is not None:  # what the fast reading took from the default shows in the value
                filled: tuple[str, ...] = ("month", "day") if fast[2] is None else ("day",) if fast[3] is None else ()
            elif _is_week(value):  # strptime takes nothing from the default
                filled = ()
            else:  # dateutil: read again with a default that differs in every field
                probe = _read_slow(value, self._probe)
                filled = tuple(f for f in ("year", "month", "day") if getattr(point, f) != getattr(probe, f))
            reading = self._readings[value] = (point, filled)
        return reading

    def keyed(self, tuples: Sequence[tuple[str, str, str]]) -> Sequence[tuple[str, str, str]]:
        if self.mode in (Mode.strict, Mode.day):
            _read_all(tuples, self._keys)  # every value is read, in every mode, as the script does
            return tuples
        return _with_keys(tuples, self._keys)

    def _key(self, value: str) -> str:
        """The key of a value not read before (see :meth:`keyed`); a completed month or year is noted.

        Month and year keys are interned: the values of one month share one key
        string, so keyed tuples on it are compared by identity, not character by
        character, when they are de-duplicated and looked up.
        """
        point, filled = self.reading(value)
        if self.mode is Mode.month:
            if "year" in filled or "month" in filled:
                self.completed[value] = point
            return sys.intern(f"{point.year}-{point.month:02d}")
        if self.mode is Mode.year:
            if "year" in filled:
                self.completed[value] = point
            return sys.intern(str(point.year))
        return value

    def span(self, key: str) -> tuple[datetime, datetime]:
        point = self.first(key)
        return point, point

    def _used(self, value: str) -> datetime:
        """The instant of ``value``, noted in ``completed`` if its reading took a field from the reference date."""
        point, filled = self.reading(value)
        if filled:
            self.completed[value] = point
        return point


_FAST = re.compile(r"([1-9]\d{3})(?:-(0[1-9]|1[0-2])(?:-(\d{2})(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?)?)?)?")


def script_read(value: str, default: datetime) -> datetime:
    """``value`` read as eval_timeline.py reads it, with ``default`` in place of today at midnight.

    ``YYYY-MM-DD`` (with ``THH:MM`` or ``THH:MM:SS``), ``YYYY-MM`` and ``YYYY``
    are read here directly, exactly as dateutil reads them (a missing day or
    month from ``default``, a day the month lacks clipped to its last);
    anything else goes through strptime or dateutil itself.
    """
    fast = _FAST.fullmatch(value)
    point = _read_fast(fast, default) if fast is not None else None
    return point if point is not None else _read_slow(value, default)


def _read_fast(match: re.Match[str], default: datetime) -> datetime | None:
    """A value :data:`_FAST` matched, read as dateutil reads it; None for a day its month lacks."""
    year, month, day, hour, minute, second = match.groups()
    if day is not None:
        try:
            return datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0))
        except ValueError:  # an impossible day: dateutil says why
            return None
    year, month = int(year), int(month) if month else default.month
    return datetime(year, month, min(default.day, calendar.monthrange(year, month)[1]))


def _is_week(value: str) -> bool:
    """Whether eval_timeline.py reads ``value`` as a ``%W`` week: it holds a ``W``, in either case."""
    return "W" in value or "w" in value


def _read_slow(value: str, default: datetime) -> datetime:
    """``value`` read with strptime (a week) or dateutil, as eval_timeline.py reads it."""
    try:
        if _is_week(value):
            return datetime.strptime(value.replace("w", "W") + "-1", "%Y-W%W-%w")
        from dateutil import parser as dateutil_parser  # imported when first needed: it slows every command's start

        with warnings.catch_warnings():  # dateutil warns about time zone names it does not know
            warnings.simplefilter("ignore")
            return dateutil_parser.parse(value, default=default)
    except (ValueError, OverflowError) as error:
        reason = f"eval_timeline.py cannot read it and stops with {type(error).__name__}: {error}"
        if _ISO_WEEK_DATE.fullmatch(value):
            reason += " (it reads weeks as YYYY-Www only; the standard profile reads ISO week dates)"
        raise TimexError(value, reason) from None


#: TIMEX3 parts of a year as (first month, last month); a month past 12 is in the next year.
YEAR_PARTS = {
    "SP": (3, 5),  # spring, summer, fall and winter are meteorological (northern hemisphere) seasons
    "SU": (6, 8),
    "FA": (9, 11),
    "WI": (12, 14),  # December to February of the next year
    "Q1": (1, 3),
    "Q2": (4, 6),
    "Q3": (7, 9),
    "Q4": (10, 12),
    "H1": (1, 6),
    "H2": (7, 12),
}

_ISO = re.compile(
    r"(?P<year>\d{4})(?:"
    r"-(?P<month>\d{2})(?:-(?P<day>\d{2})"
    r"(?:T(?:\d{2}(?::\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?|MO|AF|EV|NI|DT))?)?"
    r"|-W(?P<week>\d{2})(?:-(?P<weekday>[1-7]))?"
    r"|-(?P<part>" + "|".join(YEAR_PARTS) + r"))?",
    re.IGNORECASE,
)


def iso_interval(value: str) -> tuple[date, date]:
    """The first and last day ``value`` covers, read as ISO 8601 / TIMEX3.

    ``YYYY-MM-DD`` (a time of day after ``T`` is ignored) is one day;
    ``YYYY-Www`` is the ISO week, Monday to Sunday; ``YYYY-Www-D`` its day D;
    ``YYYY-MM`` the month; ``YYYY`` the year; ``YYYY-SP|SU|FA|WI`` the season
    (March–May, June–August, September–November, December–February),
    ``YYYY-Q1``…``Q4`` the quarter and ``YYYY-H1|H2`` the half year.
    """
    match = _ISO.fullmatch(value)
    if match is None:
        raise TimexError(value, "not an ISO 8601 date, week, month, season or year")
    year = int(match["year"])
    try:
        if match["day"]:
            day = date(year, int(match["month"]), int(match["day"]))
            return day, day
        if match["month"]:
            month = int(match["month"])
            if not 1 <= month <= 12:
                raise ValueError(f"month must be in 1..12, not {month}")
            return _month_start(year, month), _month_end(year, month)
        if match["week"]:
            monday = date.fromisocalendar(year, int(match["week"]), 1)
            if match["weekday"]:
                day = monday + timedelta(days=int(match["weekday"]) - 1)
                return day, day
            return monday, monday + timedelta(days=6)
        if match["part"]:
            first, last = YEAR_PARTS[match["part"].upper()]
            return _month_start(year, first), _month_end(year, last)
        return date(year, 1, 1), date(year, 12, 31)
    except ValueError as error:
        raise TimexError(value, f"not a valid date ({error})") from None


def _month_start(year: int, month: int) -> date:
    return date(year + (month - 1) // 12, (month - 1) % 12 + 1, 1)


def _month_end(year: int, month: int) -> date:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return date(year, month, calendar.monthrange(year, month)[1])


class IsoScale:
    """Dates as ISO 8601 intervals (:func:`iso_interval`), compared in the units of the mode.

    A key is the interval ``(first, last)`` in days (``strict``, ``day``),
    months or years; ``strict`` matches equal intervals, the relaxed modes
    intervals that share a unit. So under ``month`` the week 2024-W05
    (29 January to 4 February) matches both January and February, and
    ``2014`` matches any month of 2014; nothing depends on the day it runs.
    """

    def __init__(self, mode: Mode):
        self.mode = Mode(mode)
        self._unit = {
            Mode.strict: date.toordinal,
            Mode.day: date.toordinal,
            Mode.month: lambda day: day.year * 12 + day.month - 1,
            Mode.year: lambda day: day.year,
        }[self.mode]
        self._keys = OnFirstUse(self._key)
        self.completed: dict[str, datetime] = {}
        self.exact = self.mode is Mode.strict

    def keyed(self, tuples: Sequence[tuple[str, str, str]]) -> list[tuple[str, str, tuple[int, int]]]:
        return _with_keys(tuples, self._keys)

    def _key(self, value: str) -> tuple[int, int]:
        first, last = iso_interval(value)
        return self._unit(first), self._unit(last)

    def units(self, key: tuple[int, int]) -> range:
        return range(key[0], key[1] + 1)

    def span(self, key: tuple[int, int]) -> tuple[int, int]:
        return key

    def first(self, value: str) -> int:
        return self._keys[value][0]

    def last(self, value: str) -> int:
        return self._keys[value][1]
