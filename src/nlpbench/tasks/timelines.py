"""``score timelines``: patient treatment timelines, scored as ChemoTimelines 2024 did.

Reads the id files and the patients of the gold and predicted timelines,
checks them against each other as the profile says, then scores every
predicted patient that is among the gold ids, in prediction-file order (the
metrics are in :mod:`nlpbench.metrics.timelines`). A patient's tuples are
decoded when it is scored, so memory holds one patient's tuples at a time; a
malformed tuple is reported when its patient is read, and every patient is
read, scored or not. Rows: ``micro`` (summed counts),
``type_a`` (mean over scored patients), ``type_b`` (mean over scored patients
with gold tuples), ``official`` ((Type A F1 + Type B F1) / 2, in every mode; the profile
says which mode each script version printed it in) and one ``patient`` row per scored patient.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, cast

from nlpbench import files, profiles
from nlpbench.errors import InputError, InputWarning, collected_warnings, shorten
from nlpbench.files import Input, Source
from nlpbench.formats import timelines as timeline_format
from nlpbench.metrics.counts import PRF
from nlpbench.metrics.timelines import (
    TimelineRules,
    macro_values,
    official_score,
    patient_values,
    timeline_counts,
    timeline_values,
)
from nlpbench.metrics.timex import TimexError
from nlpbench.model.timelines import Mode
from nlpbench.profiles.timelines import TimelineProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register
from nlpbench.tasks.coverage import listed, no_gold

Timelines = timeline_format.PatientTimelines


@dataclass(frozen=True)
class _Paths:
    """Where the four inputs of a run are."""

    gold: Source
    pred: Source
    ids: Source
    gold_ids: Source | None


@dataclass(frozen=True)
class _Inputs:
    """The four inputs of a run, read."""

    gold: Timelines
    pred: Timelines
    ids: list[str]
    gold_ids: list[str] | None


@dataclass
class _Tally:
    """Running sums over the scored patients, in prediction-file order."""

    counts: list[PRF] = field(default_factory=list)
    all_values: list[tuple[float, float, float]] = field(default_factory=list)
    gold_values: list[tuple[float, float, float]] = field(default_factory=list)
    per_document: list[Row] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@register(
    "timelines",
    "Patient timelines (ChemoTimelines 2024): strict, relaxed to day / month / year",
    "timelines",
    formats=("timelines",),
    files=("all_ids", "gold_ids"),
)
def score_timelines(
    gold: Input,
    pred: Input,
    all_ids: Input,
    *,
    gold_ids: Input | None = None,
    mode: Mode | str = Mode.strict,
    profile: str = "standard",
    reference_date: date | None = None,
    on_document: Callable[[str], None] | None = None,
) -> Report:
    """Score predicted timelines against gold in ``mode``.

    ``all_ids`` lists every patient; ``gold_ids`` restricts scoring to the
    manually annotated ones. ``reference_date`` (default today) completes
    dates that lack a day, month or year under the ``chemotimelines2024``
    profile, as eval_timeline.py completes them from the day it runs.
    """
    chosen = cast(TimelineProfile, profiles.get("timelines", profile))
    mode = Mode(mode)
    reference = reference_date or date.today()
    rules = chosen.rules(mode, reference)
    paths = _Paths(
        files.source(gold), files.source(pred), files.source(all_ids), files.source(gold_ids) if gold_ids else None
    )
    with collected_warnings() as messages, collector_paused():
        tally, patients = _score_files(paths, rules, chosen, on_document)
        scores = _score_rows(tally, rules, chosen, mode)
        if rules.scale.completed:
            _reference_warning(rules, reference)
        if reference_date is not None and chosen.dates != "eval_timeline":
            _note(f"--reference-date is not used: {chosen.name} dates do not depend on the day")
    described: dict[str, Any] = {
        "gold": str(gold),
        "pred": str(pred),
        "all_ids": str(all_ids),
        "gold_ids": str(gold_ids) if gold_ids else None,
        "mode": mode.value,
    }
    if chosen.dates == "eval_timeline":
        described["reference_date"] = reference.isoformat()
    described["patients"] = patients
    return Report("timelines", chosen.name, described, scores, tally.per_document, messages)


def _score_files(
    paths: _Paths, rules: TimelineRules, profile: TimelineProfile, on_document: Callable[[str], None] | None
) -> tuple[_Tally, dict[str, int]]:
    """Read and check the inputs, score each predicted patient among the gold ids; the inputs are freed on return.

    On any error, a timeline file read so far is first refused if it nests too deep
    (:meth:`~nlpbench.formats.timelines.PatientTimelines.settle`), as a check of each file up front would have.
    """
    read: list[Timelines] = []
    try:
        return _score_read(paths, rules, profile, on_document, read)
    except Exception:
        for timelines in read:
            timelines.settle()
        raise


def _score_read(
    paths: _Paths,
    rules: TimelineRules,
    profile: TimelineProfile,
    on_document: Callable[[str], None] | None,
    read: list[Timelines],
) -> tuple[_Tally, dict[str, int]]:
    inputs = _read(paths, read)
    scored = set(inputs.gold_ids if inputs.gold_ids is not None else inputs.gold)
    if profile.id_checks == "count":
        _check_counts(inputs, paths)
    else:
        _check_identities(inputs, paths)
    if not scored:
        raise no_gold(paths.gold if inputs.gold_ids is None else paths.gold_ids, "patients")
    tally = _Tally()
    for patient in inputs.pred:
        if patient in scored:
            _score_patient(patient, inputs, paths, rules, tally)
            if on_document:
                on_document(patient)
        else:
            inputs.pred[patient]  # read and checked, as every patient is, though not scored
            tally.skipped.append(patient)
    predicted = inputs.pred.keys()
    for patient in inputs.gold:
        if patient not in scored or patient not in predicted:
            inputs.gold[patient]  # read and checked, as every patient is, though not scored
    _pairing_warnings(inputs, scored, tally)
    for timelines in (inputs.gold, inputs.pred):
        timelines.report()
    patients = {"ids": len(inputs.ids), "gold": len(inputs.gold), "predicted": len(inputs.pred)}
    return tally, {**patients, "scored": len(tally.all_values)}


def _read(paths: _Paths, read: list[Timelines]) -> _Inputs:
    """The inputs, each timeline file added to ``read`` as soon as it is read."""
    for path in (paths.gold, paths.pred):
        read.append(timeline_format.PatientTimelines(path))
    gold, pred = read
    listed_gold = timeline_format.read_ids(paths.gold_ids) if paths.gold_ids else None
    return _Inputs(gold, pred, timeline_format.read_ids(paths.ids), listed_gold)


def _check_counts(inputs: _Inputs, paths: _Paths) -> None:
    """eval_timeline.py's checks: numbers of ids, gold and predicted patients, never the ids themselves."""
    ids, gold, pred = inputs.ids, inputs.gold, inputs.pred
    blank = " (a blank line counts as an id)" if "" in ids else ""
    if not ids:
        raise InputError("no patient id: eval_timeline.py needs one line per predicted patient", paths.ids)
    if len(ids) != len(pred):
        raise InputError(
            f"{len(ids)} ids, but the predictions hold {len(pred)} patients: eval_timeline.py needs one line per "
            f"predicted patient, and a prediction for every patient{blank}",
            paths.ids,
        )
    if inputs.gold_ids is None and len(ids) != len(gold):
        raise InputError(
            f"{len(ids)} ids, but the gold holds {len(gold)} patients: without gold ids eval_timeline.py needs one "
            f"line per gold patient{blank}",
            paths.ids,
        )
    listed = inputs.gold_ids
    if listed is not None and (not listed or len(listed) != len(gold) or len(listed) > len(pred)):
        raise InputError(
            f"{len(listed)} gold ids, but the gold holds {len(gold)} patients and the predictions {len(pred)}: "
            "eval_timeline.py needs one line per gold patient, and no more than there are predicted patients"
            + (" (a blank line counts as an id)" if "" in listed else ""),
            paths.gold_ids,
        )


def _check_identities(inputs: _Inputs, paths: _Paths) -> None:
    """The same files, checked by id: predictions for exactly the listed patients, gold for the gold ones."""
    ids = _listed(inputs.ids, paths.ids)
    _same_patients(ids, inputs.pred, "the predictions", paths.ids, paths.pred)
    if inputs.gold_ids is None:
        _same_patients(ids, inputs.gold, "the gold", paths.ids, paths.gold)
        return
    gold_ids = _listed(inputs.gold_ids, paths.gold_ids)
    _same_patients(gold_ids, inputs.gold, "the gold", paths.gold_ids, paths.gold)
    unknown = [patient for patient in gold_ids if patient not in set(ids)]
    if unknown:
        raise InputError(f"patient {unknown[0]} is not in the id file {paths.ids}", paths.gold_ids)


def _listed(ids: list[str], path: Source | None) -> list[str]:
    """The ids of an id file without blank lines; a repeated id is an error."""
    seen: dict[str, int] = {}
    for number, patient in enumerate(ids, start=1):
        if not patient.strip():
            continue
        if patient in seen:
            raise InputError(f"patient {shorten(patient)} is listed twice, on lines {seen[patient]} and {number}", path)
        seen[patient] = number
    return list(seen)


def _same_patients(ids: list[str], timelines: Timelines, name: str, ids_path: Source | None, path: Source) -> None:
    listed, known = set(ids), timelines.keys()
    missing = [patient for patient in ids if patient not in known]
    if missing:
        raise InputError(
            f"patient {missing[0]} of {ids_path} is not in {name} (write a patient without tuples as "
            f'"{missing[0]}": [])',
            path,
        )
    extra = [patient for patient in timelines if patient not in listed]
    if extra:
        raise InputError(f"patient {extra[0]} is not listed in {ids_path}", path)


def _score_patient(patient: str, inputs: _Inputs, paths: _Paths, rules: TimelineRules, tally: _Tally) -> None:
    try:
        gold = inputs.gold[patient]
    except KeyError:
        raise InputError(
            f"patient {shorten(patient)} is listed in the gold ids but has no gold timeline", paths.gold
        ) from None
    predicted = inputs.pred[patient]
    try:
        counts = timeline_counts(gold, predicted, rules)
    except TimexError as error:
        path = paths.gold if error.side == "gold" else paths.pred
        raise InputError(str(error), path, f"patient {shorten(patient)}") from None
    values = patient_values(counts, len(gold), script_arithmetic=rules.script_arithmetic)
    tally.counts.append(counts)
    tally.all_values.append(values)
    if gold:
        tally.gold_values.append(values)
    precision, recall, f1 = values
    tally.per_document.append(
        {
            "document": patient,
            "metric": "patient",
            "gold": len(gold),
            "tp": counts.tp,
            "fp": counts.fp,
            "fn": counts.fn,
            "precision": precision,
            "recall": recall,
            "f1": f1,
        }
    )


def _counts(counts: PRF) -> Row:
    return {"tp": counts.tp, "fp": counts.fp, "fn": counts.fn}


def _values(values: tuple[float, float, float]) -> Row:
    return dict(zip(("precision", "recall", "f1"), values, strict=True))


def _score_rows(tally: _Tally, rules: TimelineRules, profile: TimelineProfile, mode: Mode) -> list[Row]:
    arithmetic = rules.script_arithmetic
    micro = sum(tally.counts, PRF())
    if not tally.all_values:
        _warn("no patient was scored (no predicted patient is among the gold ids): every score is 0")
    elif micro.tp + micro.fp == 0:
        _warn("no scored patient has a true or false positive: micro precision is 0/0, reported as 0")
    elif micro.tp + micro.fn == 0:
        _warn("no scored patient has a true positive or false negative: micro recall is 0/0, reported as 0")
    if tally.all_values and not tally.gold_values:
        _warn("no scored patient has gold tuples: Type B is an empty mean, reported as 0")
    type_a = macro_values(tally.all_values, script_arithmetic=arithmetic)
    type_b = macro_values(tally.gold_values, script_arithmetic=arithmetic)
    rows: list[Row] = [
        {"metric": "micro", **_counts(micro), **_values(timeline_values(micro, script_arithmetic=arithmetic))},
        {"metric": "type_a", "patients": len(tally.all_values), **_values(type_a)},
        {"metric": "type_b", "patients": len(tally.gold_values), **_values(type_b)},
    ]
    rows.append({"metric": "official", "f1": official_score(type_a[2], type_b[2])})
    return rows


def _warn(message: str) -> None:
    _note(f"{message} (eval_timeline.py stops with ZeroDivisionError here)")


def _note(message: str) -> None:
    warnings.warn(message, InputWarning, stacklevel=3)


def _pairing_warnings(inputs: _Inputs, scored: set[str], tally: _Tally) -> None:
    """Name the patients that eval_timeline.py leaves out without a word."""
    gold, predicted = inputs.gold.keys(), inputs.pred.keys()
    unscored = sorted(patient for patient in scored if patient in gold and patient not in predicted)
    if unscored:
        _note(f"{len(unscored)} gold patients have no prediction and are not scored: {listed(unscored)}")
    if inputs.gold_ids is None and tally.skipped:
        _note(f"{len(tally.skipped)} predicted patients are not in the gold and not scored: {listed(tally.skipped)}")


def _reference_warning(rules: TimelineRules, reference: date) -> None:
    shown = [f"{value!r} as {point:%Y-%m-%d}" for value, point in rules.scale.completed.items()]
    _note(
        f"dates completed from the reference date {reference.isoformat()}, as eval_timeline.py completes a date "
        f"without day, month or year from the day it runs ({len(shown)} in all): {listed(shown)}; "
        "their comparisons can change with --reference-date"
    )
