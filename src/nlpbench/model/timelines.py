"""Patient treatment timelines (ChemoTimelines): what a patient received, and when.

A timeline is the list of ``<chemo, label, date>`` tuples of one patient, for
example ``<carboplatin, contains-1, 2013-02-22>``: carboplatin was given on
(``contains-1``, "is contained by"), began on (``begins-on``) or ended on
(``ends-on``) that date. Dates are TIMEX3 values: ``2013-02-22``, ``2013-02``,
``2013``, ``2013-W08``. The list is kept as written, repeats included: the
official scorer counts a repeated tuple as often as it occurs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

CONTAINS = "contains-1"
BEGINS_ON = "begins-on"
ENDS_ON = "ends-on"

#: The labels of the ChemoTimelines 2024 task.
TIMELINE_LABELS = (CONTAINS, BEGINS_ON, ENDS_ON)


class Mode(StrEnum):
    """How closely a predicted tuple must match: exactly, or relaxed to the day, month or year.

    Defined with the model, not with the date scales of :mod:`nlpbench.metrics.timex` that apply it, so
    that ``nlpbench score`` can offer the modes without importing the timelines metrics.
    """

    strict = "strict"
    day = "day"
    month = "month"
    year = "year"


class TimelineTuple(NamedTuple):
    """One entry of a timeline: ``chemo`` has relation ``label`` to ``date``."""

    chemo: str
    label: str
    date: str


@dataclass(frozen=True, slots=True)
class Timeline:
    """The timeline of one patient, in the order it was written."""

    patient: str
    tuples: tuple[TimelineTuple, ...] = ()
