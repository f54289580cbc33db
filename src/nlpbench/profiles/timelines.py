"""Profiles of the patient timeline task (``nlpbench score timelines``).

- ``chemotimelines2024``: ``eval_timeline.py`` of the ChemoTimelines 2024
  shared task (BCHHealthNLP/chemoTimelinesEval, version string v20240305, at
  commit a7cf6f7 of October 2024) exactly, numbers to the last bit.
- ``standard``: the same task definition (list counts, range and label rules,
  generic mentions, zero rules, Type A/B) with dates read as ISO 8601
  intervals that do not depend on the day the scorer runs, labels compared
  case-insensitively, exact arithmetic, and the id files checked by id.

Official score: both profiles report the ``official`` row, (Type A F1 + Type B
F1) / 2, in every mode; the formula does not depend on the mode. Which mode's
number is *the* official one depends on the script version:

- v20240305 (commit fdcf3fc, 2024-03-05, the version of the 2024 shared task,
  and the README to this day): ``Official Score`` printed only with
  ``--relaxed_to month``; the 2024 leaderboard ranked that number;
- commit a7cf6f7 (2024-10-01, "strict eval as official metric", version string
  still v20240305): printed only with ``--strict``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from nlpbench.metrics.timelines import TimelineRules
from nlpbench.metrics.timex import IsoScale, Scale, ScriptScale
from nlpbench.model.timelines import Mode
from nlpbench.profiles.base import Profile, quirk, register

#: Date readings a profile can name.
DATE_READINGS = ("eval_timeline", "iso8601")


@dataclass(frozen=True)
class TimelineProfile(Profile):
    """How ``score timelines`` reads dates, compares labels, checks ids and presents the numbers."""

    dates: str = quirk(
        "iso8601",
        "eval_timeline.py reads a date with dateutil, which takes a missing day, month or year from the day it runs "
        "(2013-05 is the 21st when run on a 21st, 2014 is 2014-11-21 in November), reads YYYY-Www as the Monday of "
        "strptime's %W week (not ISO: 2013-W05 is 2013-02-04, not 2013-01-28, and a week across two months counts "
        "for one), and stops on seasons (2013-SU) and ISO week dates (2013-W05-3); so month and year scores change "
        "with the run date. 'eval_timeline' does the same with --reference-date as today; 'iso8601' reads ISO 8601 "
        "intervals (ISO weeks, whole months and years, seasons as month ranges) that match when they share a day, "
        "month or year.",
    )
    casefold_labels: bool = quirk(
        True,
        "eval_timeline.py compares labels as written, although its README asks for lower case: BEGINS-ON matches "
        "nothing and builds no range, so an upper-case system loses every tuple.",
    )
    script_arithmetic: bool = quirk(
        False,
        "eval_timeline.py computes F1 as 2PR/(P+R) from the float P and R and macro means as left-to-right sums "
        "in prediction-file order, which differ in the last bits from 2TP/(2TP+FP+FN) and exact means "
        "(0.7499999999999999 for 0.75).",
    )
    id_checks: str = quirk(
        "identity",
        "eval_timeline.py only counts: the id file must have as many lines as the prediction file has patients "
        "and (without gold ids) as the gold file; ids are never compared, so a gold patient missing from the "
        "predictions is silently not scored. 'count' does the same (and warns), 'identity' requires the same ids.",
    )
    official_mode: tuple[tuple[str, str], ...] = quirk(
        (),
        "The mode in which each eval_timeline.py version prints `Official Score` (Type A F1 + Type B F1) / 2: "
        "v20240305 of the 2024 task only with --relaxed_to month, a7cf6f7 (October 2024) only with --strict. "
        "nlpbench reports the `official` row in every mode; compare the one your version printed.",
    )

    def rules(self, mode: Mode | str, reference: date) -> TimelineRules:
        """The comparison rules of ``mode``; ``reference`` completes partial dates under ``eval_timeline``."""
        mode = Mode(mode)
        scale: Scale = ScriptScale(mode, reference) if self.dates == "eval_timeline" else IsoScale(mode)
        return TimelineRules(mode, scale, self.casefold_labels, self.script_arithmetic)

    def __post_init__(self) -> None:
        if self.dates not in DATE_READINGS:
            raise ValueError(f"unknown date reading {self.dates!r}; known: {', '.join(DATE_READINGS)}")
        if self.id_checks not in ("count", "identity"):
            raise ValueError(f"id_checks is 'count' or 'identity', not {self.id_checks!r}")


STANDARD = register(
    TimelineProfile(
        task="timelines",
        name="standard",
        summary="ISO 8601 date intervals, case-insensitive labels, exact arithmetic, ids checked by id.",
        reference="ChemoTimelines 2024 task definition (README of BCHHealthNLP/chemoTimelinesEval)",
    )
)

CHEMOTIMELINES2024 = register(
    TimelineProfile(
        task="timelines",
        name="chemotimelines2024",
        summary="eval_timeline.py of ChemoTimelines 2024 exactly (dateutil dates, %W weeks, count checks).",
        reference="BCHHealthNLP/chemoTimelinesEval eval_timeline.py v20240305 at a7cf6f7 (October 2024)",
        dates="eval_timeline",
        casefold_labels=False,
        script_arithmetic=True,
        id_checks="count",
        official_mode=(("v20240305 (fdcf3fc, 2024-03-05)", "month"), ("a7cf6f7 (2024-10-01)", "strict")),
    )
)
