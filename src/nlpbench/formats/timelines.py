"""Patient timelines (ChemoTimelines 2024): the timeline JSON, id files and system TSV output.

- ``timelines``: ``{"patient": [["chemo", "label", "date"], …], …}``, the
  format ``eval_timeline.py`` scores. Every tuple must be three strings — an
  error otherwise, even in patients the official script never looks into.
  A patient written twice is an error (``json.load`` would keep its last timeline).
- id files: one patient id per line. :func:`read_ids` reads them as
  ``eval_timeline.py`` does: each line without its line break, so a blank line
  is the id ``""``.
- ``timelines-tsv`` (read only): the tab-separated output of the ChemoTimelines
  baseline system, with the columns DCT, patient_id, chemo_text,
  chemo_annotation_id, normed_timex, timex_annotation_id, tlink, note_name and
  tlink_inst, summarised into timelines as ``docker_output_to_timeline.py``
  does (:func:`read_system_tsv`).

Patient timelines are not documents, so these formats have a registry of their
own (:data:`REGISTRY`), which ``nlpbench convert`` and ``nlpbench formats``
consult beside the document formats.
"""

from __future__ import annotations

import csv
import json
import warnings
from collections.abc import Callable, Iterable, Iterator, KeysView, Mapping
from dataclasses import dataclass
from pathlib import Path

import msgspec

from nlpbench import files
from nlpbench.errors import InputError, InputWarning, excerpt, shorten
from nlpbench.files import Source
from nlpbench.formats import jsonstream
from nlpbench.model import TIMELINE_LABELS, Timeline, TimelineTuple
from nlpbench.registry import Registry


def read(path: Source) -> Iterator[Timeline]:
    """The timelines of a timeline JSON file, in file order."""
    for patient, tuples in read_patients(path).items():
        yield Timeline(patient, tuples)


def read_patients(path: Source) -> dict[str, tuple[TimelineTuple, ...]]:
    """The tuples of each patient of a timeline JSON file, in file order.

    Tuples whose label is not a ChemoTimelines label are kept, and counted in a warning.
    """
    data = files.read_bytes(path)
    try:
        patients = jsonstream.decode(data, path, type=dict[str, tuple[TimelineTuple, ...]])
    except msgspec.ValidationError:  # JSON, but not timelines: say where
        raise _first_problem(data, path) from None
    labels = _Labels(path)
    for patient, tuples in patients.items():
        labels.check(patient, tuples)
    labels.report()
    return patients


#: A patient's tuples as :class:`PatientTimelines` gives them: plain ``(chemo, label, date)`` tuples.
Tuples = tuple[tuple[str, str, str], ...]


class _Labels:
    """Counts tuples whose label is none of :data:`~nlpbench.model.TIMELINE_LABELS` (in any case)."""

    def __init__(self, path: Source):
        self.path, self.count, self.first = path, 0, ""

    def check(self, patient: str, tuples: Tuples) -> None:
        for number, item in enumerate(tuples):
            if item[1].lower() not in TIMELINE_LABELS:
                if not self.count:
                    self.first = f"patient {shorten(patient)}, tuple {number}: {excerpt(item[1])}"
                self.count += 1

    def report(self) -> None:
        if self.count:
            warnings.warn(
                f"{self.path}: {self.count} tuples whose label is not {', '.join(TIMELINE_LABELS)}: they match no "
                f"tuple of another label (first: {self.first})",
                InputWarning,
                stacklevel=3,
            )


class PatientTimelines(Mapping[str, Tuples]):
    """The timelines of a timeline JSON file, each patient's tuples decoded when it is looked up.

    The file is parsed once into each patient's JSON text; looking a patient up
    decodes its tuples, or raises the error :func:`read_patients` raises for
    them. A scorer that takes one patient at a time then holds one patient's
    tuples instead of the whole file's (a tuple and its three strings take
    about 300 bytes): scoring the 10,000 patients of the timelines benchmark
    takes a quarter of the memory (22 MB instead of 82 MB) and 8–20 % less CPU,
    most of it the time the system takes to hand out the memory of whole files.
    Iterating, ``len`` and ``in`` look at the patient ids only.

    A patient's tuples are plain tuples, not :class:`~nlpbench.model.TimelineTuple`: Python unpacks a
    plain tuple in a few instructions, and a subclass of tuple (a named tuple) through an iterator, and
    scoring unpacks every tuple once or twice (callgrind: 4 % of a month-mode `score timelines` command
    on 2,000 patients).

    The file's nesting depth is checked when a patient's tuples are not a timeline, or by :meth:`settle`
    (:func:`~nlpbench.formats.jsonstream.raw_members`): decoding a patient as a timeline bounds it, and
    checking it up front cost more than reading the file (13 ms of CPU a 6 MB file, against 7 ms for the
    decode). A reader that stops on an error calls :meth:`settle` first, so a file nested too deep is refused
    before anything else is said of it, as when it was checked up front.
    """

    def __init__(self, path: Source):
        self.path = path
        self.labels = _Labels(path)
        data = files.read_bytes(path)
        try:
            self._raw, self._unchecked = jsonstream.raw_members(data, path)
        except msgspec.ValidationError:  # JSON, but no object
            raise _first_problem(data, path) from None

    def settle(self) -> None:
        """Refuse the file if it nests deeper than :data:`~nlpbench.formats.jsonstream.MAX_DEPTH` and its depth
        is still unchecked: before any error about it, or about what is read with it, is reported."""
        if self._unchecked is not None:
            data, self._unchecked = self._unchecked, None
            jsonstream.check(data, self.path)

    def __getitem__(self, patient: str) -> Tuples:
        raw = self._raw[patient]
        try:
            tuples = _TUPLES.decode(raw)
        except UnicodeDecodeError as error:
            self.settle()
            raise InputError(f"not UTF-8 text ({error.reason})", self.path, f"patient {shorten(patient)}") from None
        except msgspec.ValidationError:  # JSON, but not a timeline: say where
            self.settle()
            problem = _patient_problem(patient, msgspec.json.decode(raw), self.path)
            raise problem or InputError("not a timeline", self.path, f"patient {shorten(patient)}") from None
        self.labels.check(patient, tuples)
        return tuples

    def report(self) -> None:
        """Warn about the tuples of unknown labels among the patients looked up so far."""
        self.labels.report()

    def __contains__(self, patient: object) -> bool:
        return patient in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def keys(self) -> KeysView[str]:
        """The patient ids, a set-like view whose ``in`` costs no method call."""
        return self._raw.keys()

    def __len__(self) -> int:
        return len(self._raw)


_TUPLES = msgspec.json.Decoder(Tuples)


def _first_problem(data: bytes, path: Source) -> InputError:
    """What is wrong with a JSON file that is not {patient: [[chemo, label, date], …]}, and where."""
    timelines = jsonstream.decode(data, path)
    if not isinstance(timelines, dict):
        return InputError("a timeline file holds one JSON object {patient: [[chemo, label, date], …]}", path)
    for patient, tuples in timelines.items():
        problem = _patient_problem(patient, tuples, path)
        if problem is not None:
            return problem
    return InputError("not a timeline file", path)


def _patient_problem(patient: str, tuples: object, path: Source) -> InputError | None:
    """What is wrong with one patient's timeline, if it is not [[chemo, label, date], …]."""
    if not isinstance(tuples, list):
        return InputError("a timeline is a list of [chemo, label, date]", path, f"patient {shorten(patient)}")
    for number, item in enumerate(tuples):
        if not (isinstance(item, list) and len(item) == 3 and all(isinstance(field, str) for field in item)):
            where = f"patient {shorten(patient)}, tuple {number}"
            return InputError(f"{shorten(json.dumps(item))} is not [chemo, label, date] of three strings", path, where)
    return None


def write(timelines: Iterable[Timeline], path: Path) -> None:
    """Write timeline JSON, one patient per line."""
    lines = [
        json.dumps(timeline.patient, ensure_ascii=False) + ": " + json.dumps(timeline.tuples, ensure_ascii=False)
        for timeline in timelines
    ]
    files.write_text(path, "{\n  " + ",\n  ".join(lines) + "\n}\n" if lines else "{}\n")


def read_ids(path: Source) -> list[str]:
    """The ids of an id file, one per line, as eval_timeline.py reads them (a blank line is ``""``)."""
    return [line.splitlines()[0] for line in files.text_lines(path)]


#: Chemo mentions the summariser calls generic (lower-cased text, exact match).
CHEMO_MENTIONS = frozenset(
    {
        "chemotherapy", "chemo", "chem", "chemo therapy", "chemo-radiation", "chemo-rt", "chemoembolization",
        "chemorad", "chemoirradiation", "chemort", "chemotherapeutic", "chemotherap", "chemotherapies",
        "chemotherapy's", "chemotheray", "chemoradiation",
    }
)  # fmt: skip

#: The summariser's label precedence when one chemo has several labels on one date: lowest wins.
LABEL_RANKS = {"begins-on": 1, "ends-on": 1, "contains": 2, "contains-1": 2, "before": 3}

#: The columns the summariser reads.
TSV_COLUMNS = ("patient_id", "chemo_text", "chemo_annotation_id", "normed_timex", "timex_annotation_id", "tlink")


_NO_RELATION = "rows without a relation or date ('none')"
_NOT_CALENDAR = "rows whose date is no calendar value (PRESENT_REF, durations)"
_REPEATED = "repeated tuples"
_GENERIC = "generic mentions beside a specific chemo"
_CONFLICT = "labels that lost a conflict on the same chemo and date"


@dataclass
class _Summary:
    """What the summariser keeps of the rows of one TSV file, and how many rows it drops."""

    patients: dict[str, None]
    kept: set[str]
    dated: dict[str, dict[tuple[str, str], dict[str, None]]]
    same_date: dict[str, dict[tuple[str, str], list[str]]]
    dropped: dict[str, int]


def read_system_tsv(path: Source) -> Iterator[Timeline]:
    """Timelines summarised from system TSV output, as ``docker_output_to_timeline.py`` does.

    1. Rows whose ``tlink`` or ``normed_timex`` is ``none`` are dropped, and
       rows whose ``normed_timex`` does not start with a number before its first
       ``-`` (``PRESENT_REF``, durations).
    2. Chemo text and date are lower-cased and a date is cut at its first ``t``
       (``2013-10-30T06:47`` → ``2013-10-30``); the patient is the note name in
       ``chemo_annotation_id`` (``<n>@e@<patient>_<note>@system``) up to its first
       ``_`` — the ``patient_id`` column only names patients with nothing kept.
    3. Each (chemo, label, date) is kept once per patient; a generic mention
       (:data:`CHEMO_MENTIONS`) is dropped when a specific chemo has its date
       and label.
    4. A chemo with several labels on one date keeps the one of lowest
       :data:`LABEL_RANKS` rank, the first written on a tie; a label without a
       rank in such a conflict is an error (the script stops with KeyError).
    5. Patients with nothing kept get an empty timeline.

    Differences: cells are read as text (pandas would read an all-numeric
    column as numbers and stop on bare years), the order is that of the file
    (the script's follows Python set order), and an empty cell it would stop on
    is an error naming the line.
    """
    summary = _summarise_rows(path)
    timelines = {patient: _resolved(patient, dated, summary, path) for patient, dated in summary.dated.items()}
    for patient in summary.patients:
        if patient not in summary.kept:
            timelines[patient] = ()
    shown = ", ".join(f"{n} {why}" for why, n in summary.dropped.items() if n)
    if shown:
        warnings.warn(f"{path}: left out as the summariser does: {shown}", InputWarning, 2)
    for patient, tuples in timelines.items():
        yield Timeline(patient, tuples)


def _summarise_rows(path: Source) -> _Summary:
    reasons = (_NO_RELATION, _NOT_CALENDAR, _REPEATED, _GENERIC, _CONFLICT)
    summary = _Summary({}, set(), {}, {}, dict.fromkeys(reasons, 0))
    try:
        rows = csv.reader(files.text_lines(path, newline=""), delimiter="\t")
        header = next(rows, None)
        if header is None:
            raise InputError("empty file: expected a header line with the system output columns", path)
        missing = [name for name in TSV_COLUMNS if name not in header]
        if missing:
            raise InputError(f"no column {', '.join(missing)} in the header", path, "line 1")
        column = {name: header.index(name) for name in TSV_COLUMNS}
        for number, row in enumerate(rows, start=2):
            if row:
                _summarise_row(row, len(header), column, summary, path, f"line {number}")
    except csv.Error as error:
        raise InputError(f"not tab-separated values ({error})", path) from None
    return summary


def _summarise_row(
    row: list[str], width: int, column: dict[str, int], summary: _Summary, path: Source, where: str
) -> None:
    if len(row) != width:
        raise InputError(f"{len(row)} fields, the header has {width}", path, where)
    patient_id, label, timex = row[column["patient_id"]], row[column["tlink"]], row[column["normed_timex"]]
    if not patient_id:
        raise InputError("empty patient_id cell", path, where)
    summary.patients.setdefault(patient_id)
    if label == "none" or timex == "none":
        summary.dropped[_NO_RELATION] += 1
        return
    if not timex:
        raise InputError("empty normed_timex cell (the summariser stops with AttributeError)", path, where)
    if not timex.split("-")[0].isnumeric():
        summary.dropped[_NOT_CALENDAR] += 1
        return
    summary.kept.add(patient_id)
    chemo, annotation_id = row[column["chemo_text"]], row[column["chemo_annotation_id"]]
    for name, cell in (("tlink", label), ("chemo_text", chemo)):
        if not cell:
            raise InputError(f"empty {name} cell", path, where)
    note = annotation_id.split("@")
    if len(note) < 2:
        raise InputError(
            f"chemo_annotation_id {excerpt(annotation_id)} names no note (<n>@e@<note>@system)", path, where
        )
    patient = note[-2].split("_")[0]
    chemo, date = chemo.lower(), timex.lower()
    date = date.split("t")[0]
    dates = summary.dated.setdefault(patient, {}).setdefault((chemo, label), {})
    summary.dropped[_REPEATED] += date in dates
    dates[date] = None
    summary.same_date.setdefault(patient, {}).setdefault((date, label), []).append(chemo)


def _resolved(patient: str, dated: dict[tuple[str, str], dict[str, None]], summary: _Summary, path: Source):
    """Steps 3 and 4 of :func:`read_system_tsv` for one patient."""
    labels: dict[tuple[str, str], list[str]] = {}
    same_date = summary.same_date[patient]
    for (chemo, label), dates in dated.items():
        for date in dates:
            if chemo in CHEMO_MENTIONS and any(other not in CHEMO_MENTIONS for other in same_date[date, label]):
                summary.dropped[_GENERIC] += 1
                continue
            labels.setdefault((chemo, date), []).append(label)
    resolved = []
    for (chemo, date), options in labels.items():
        unranked = [label for label in options if label not in LABEL_RANKS]
        if len(options) > 1 and unranked:
            raise InputError(
                f"{chemo} on {date} has the labels {', '.join(options)}: the summariser settles such a conflict only "
                f"among {', '.join(LABEL_RANKS)} and stops with KeyError on {unranked[0]!r}",
                path,
                f"patient {patient}",
            )
        summary.dropped[_CONFLICT] += len(options) - 1
        resolved.append(TimelineTuple(chemo, min(options, key=lambda label: LABEL_RANKS.get(label, 0)), date))
    return tuple(resolved)


@dataclass(frozen=True)
class TimelineFormat:
    """A named patient-timeline format; ``write`` is None for a format nlpbench only reads."""

    name: str
    summary: str
    read: Callable[[Path], Iterator[Timeline]]
    write: Callable[[Iterable[Timeline], Path], None] | None = None


REGISTRY: Registry[TimelineFormat] = Registry("timeline format")
REGISTRY.register(
    "timelines", TimelineFormat("timelines", "ChemoTimelines JSON {patient: [[chemo, label, date], …]}", read, write)
)
REGISTRY.register(
    "timelines-tsv",
    TimelineFormat(
        "timelines-tsv", "ChemoTimelines system TSV, summarised into timelines (read only)", read_system_tsv
    ),
)


def convert(source: Path, target: Path, from_format: str, to_format: str) -> tuple[int, int]:
    """Read ``source`` as one timeline format and write ``target`` as another; (patients, tuples) written."""
    reader, writer = REGISTRY.get(from_format), REGISTRY.get(to_format)
    if writer.write is None:
        writable = ", ".join(name for name in REGISTRY.names() if REGISTRY.get(name).write)
        raise InputError(f"nlpbench reads {to_format} but does not write it; write {writable}")
    timelines = list(reader.read(Path(source)))
    writer.write(timelines, Path(target))
    return len(timelines), sum(len(timeline.tuples) for timeline in timelines)
