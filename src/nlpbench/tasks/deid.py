"""``score deid``: de-identified notes scored against the original notes and their gold PHI.

The gold is the notes with their text and gold PHI annotations (NLP Sandbox patient bundles, or any
format nlpbench reads that carries the text); the prediction is the notes after de-identification,
a file of (:func:`read_deidentified`):

- ``phi-deidentifier`` 1.2.0 answers (``POST /deidentifiedNotes``: ``{deidentifiedNote,
  deidentifiedAnnotations, originalAnnotations}``), one JSON object, a JSON array or JSON lines; the
  note's ``identifier`` and ``text`` are read (the tool's annotations are what it found, not the gold);
- de-identified notes ``{"noteId" (or "id"), "text"}``, a JSON array or JSON lines.

Each note is aligned to its original and counted as :mod:`nlpbench.metrics.deidentified` says: residual
PHI per type and per HIPAA category, over-redaction, alignment, the format of the replacements (against
``config``, the de-identification steps asked of the tool: :data:`~nlpbench.toolapi.deidentify.DEFAULT_STEPS`
unless given) and the consistency of date shifts per patient (the note's ``patientId``). A gold note
without a de-identified one counts as not de-identified at all: every one of its tokens is kept.
The headline is ``hipaa_token`` recall: the share of gold HIPAA PHI tokens removed or replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import ValidationError

from nlpbench import files, profiles
from nlpbench.errors import InputError, collected_warnings, json_kind
from nlpbench.files import Input, read_bytes
from nlpbench.formats import jsonstream
from nlpbench.metrics.deidentified import (
    GoldSpan,
    Rate,
    Replaced,
    TokenCounts,
    align,
    conforms,
    consistent_shifts,
    replaced_groups,
    token_counts,
)
from nlpbench.model import PHI_LABELS, Annotation, Document, Span, phi_type
from nlpbench.profiles.deid import DeidProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register, side_documents
from nlpbench.tasks.coverage import listed, no_gold
from nlpbench.toolapi.dateshift import date_of
from nlpbench.toolapi.deidentify import DEFAULT_STEPS, StepError, deidentify
from nlpbench.toolapi.schemas import DeidentificationStep

#: Each 1.2.0 strategy's name in :data:`nlpbench.metrics.deidentified.STRATEGIES`.
_STRATEGY_NAMES = {
    "maskingCharConfig": "mask",
    "redactConfig": "redact",
    "annotationTypeMaskConfig": "type",
    "dateOffsetConfig": "date_offset",
}
#: The step nlpbench adds to the 1.2.0 four: ``{"annotationTypes": […], "surrogateConfig": {}}``.
SURROGATE = "surrogateConfig"
#: That step's strategy, as :class:`Steps` names it.
SURROGATE_STRATEGY = "surrogate"


@register("deid", "De-identified notes: residual PHI, over-redaction, format, date shifts, alignment", "deid",
          formats=("sandbox", "sandbox-bundles", "brat", "bioc", "i2b2", "jsonl"), files=("config",))  # fmt: skip
def score_deid(
    gold: Input,
    pred: Input,
    *,
    profile: str = "standard",
    config: Input | None = None,
    gold_format: str = "sandbox",
    per_document: bool = True,
    on_document: Callable[[str], None] | None = None,
) -> Report:
    """Score de-identified notes against the gold notes and their PHI (see the module's docstring).

    ``config`` is a JSON file of the de-identification steps the tool was asked for (a list of 1.2.0
    ``DeidentificationStep`` objects, or ``{"deidentificationSteps": […]}``); it decides what a
    replacement should look like.
    """
    chosen = cast(DeidProfile, profiles.get("deid", profile))
    steps = read_config(config)
    deidentified = {note.id: note for note in read_deidentified(pred)}
    tally = _Tally(steps, per_document)
    with collected_warnings() as warnings, collector_paused():
        for document in side_documents(gold, gold_format):
            if document.text is None:
                raise InputError("the gold needs each note's text (NLP Sandbox patient bundles carry it)", gold,
                                 f"note {document.id}")  # fmt: skip
            tally.add(document, deidentified.pop(document.id, None))
            if on_document:
                on_document(document.id)
    if not tally.notes:
        raise no_gold(gold, "notes")
    notes = [*tally.finish(), *warnings]
    if tally.missing:
        notes.append(
            f"{len(tally.missing)} gold notes have no de-identified note, scored as left as they were: "
            f"{listed(tally.missing)}"
        )
    if deidentified:
        unknown = sorted(deidentified)
        notes.append(f"{len(unknown)} de-identified notes are not in the gold, not scored: {listed(unknown)}")
    inputs = {"gold": str(gold), "pred": str(pred), "config": str(config) if config is not None else "default"}
    return Report("deid", chosen.name, inputs, tally.score_rows(), tally.per_document, notes)


@dataclass(frozen=True)
class Deidentified:
    """A de-identified note: its id and its text."""

    id: str
    text: str


def read_deidentified(path: Input) -> Iterator[Deidentified]:
    """The de-identified notes of a file (see the module's docstring); messages name the record, never text.

    The file is one JSON text (an array or an object) or JSON lines, read as every JSON input is
    (:mod:`nlpbench.formats.jsonstream`: nesting, repeated keys and encodings checked)."""
    try:
        data: Any = jsonstream.decode(read_bytes(path), path)
    except InputError:  # not one JSON text: JSON lines, whose reading names the line at fault
        records, places = [], []
        for place, record in jsonstream.json_lines(files.source(path)):
            records.append(record)
            places.append(place)
    else:
        records = data if isinstance(data, list) else [data]
        places = [f"record {i}" for i in range(len(records))]
    seen: set[str] = set()
    for record, place in zip(records, places, strict=True):
        note = _deidentified(record, path, place)
        if note.id in seen:
            raise InputError(f"note {note.id} is de-identified twice", path, place)
        seen.add(note.id)
        yield note


def _deidentified(record: Any, path: Input, place: str) -> Deidentified:
    if not isinstance(record, dict):
        raise InputError(f"expected an object, found {json_kind(record)}", path, place)
    if "deidentifiedNote" in record:
        note = record["deidentifiedNote"]
        if not isinstance(note, dict) or not isinstance(note.get("identifier"), str):
            raise InputError("deidentifiedNote needs an identifier", path, place)
        identifier, text = note["identifier"], note.get("text")
    else:
        identifier, text = record.get("noteId", record.get("id")), record.get("text")
        if not isinstance(identifier, str):
            raise InputError("a de-identified note needs a noteId (or id) string", path, place)
    if not isinstance(text, str):
        raise InputError(f"note {identifier}: the de-identified text must be a string", path, place)
    return Deidentified(identifier, text)


@dataclass(frozen=True)
class Steps:
    """The configured steps: those of the 1.2.0 API, run to get what a replacement should be, and the
    strategies configured for each PHI type (every step that names it)."""

    api: tuple[DeidentificationStep, ...]
    strategies: dict[str, tuple[str, ...]]


def read_config(config: Input | None) -> Steps:
    """The de-identification steps of ``config`` (see :func:`score_deid`), or the default ones."""
    raw: Any = list(DEFAULT_STEPS)
    if config is not None:
        raw = jsonstream.decode(read_bytes(config), config)
        if isinstance(raw, dict):
            raw = raw.get("deidentificationSteps")
        if not isinstance(raw, list):
            raise InputError("expected a list of de-identification steps, or {deidentificationSteps: […]}", config)
    api: list[DeidentificationStep] = []
    strategies: dict[str, tuple[str, ...]] = {}
    for index, step in enumerate(raw):
        where = f"deidentificationSteps[{index}]"
        if not isinstance(step, dict):
            raise InputError(f"expected an object, found {json_kind(step)}", config, where)
        types = step.get("annotationTypes")
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise InputError("annotationTypes must be a list of annotation types", config, where)
        if SURROGATE in step:
            names = [SURROGATE_STRATEGY]
        else:
            try:
                parsed = DeidentificationStep.model_validate(step)
            except ValidationError as error:
                first = error.errors(include_input=False, include_url=False)[0]
                at = ".".join(str(part) for part in first["loc"])
                raise InputError(f"not a 1.2.0 de-identification step: {at}: {first['msg']}", config, where) from None
            api.append(parsed)
            names = [name for key, name in _STRATEGY_NAMES.items() if getattr(parsed, key) is not None]
        for annotation_type in types:
            label = annotation_type.removeprefix("text_")
            strategies[label] = (*strategies.get(label, ()), *names)
    return Steps(tuple(api), strategies)


@dataclass
class _Tally:
    """Sums over the notes, their per-document rows, and what the run noted."""

    steps: Steps
    keep_documents: bool
    notes: int = 0
    totals: TokenCounts = field(default_factory=TokenCounts)
    formats: Rate = field(default_factory=Rate)
    documents: list[tuple[str, TokenCounts, Rate]] = field(default_factory=list)
    shifts: list[tuple[str, str, int]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unexpected: int = 0
    per_document: list[Row] = field(default_factory=list)
    date_shifts: Rate = field(default_factory=Rate)

    def add(self, gold: Document, pred: Deidentified | None) -> None:
        assert gold.text is not None  # checked by the caller
        self.notes += 1
        if pred is None:
            self.missing.append(gold.id)
        alignment = align(gold.text, pred.text if pred is not None else gold.text)
        spans = [
            GoldSpan(a.start, a.end, a.label, a.attributes.get(phi_type(a.label).type_attribute))
            for a in gold.annotations
            if a.label in PHI_LABELS
        ]
        conforming = Rate()
        patient = str(gold.metadata.get("patientId") or gold.id)
        moved = []
        for group in replaced_groups(alignment, spans):
            replacement = alignment.deidentified[group.new_start : group.new_end]
            conforming += Rate(int(self._conforms(gold.text, group, replacement)), 1)
            days = _shift(gold.text, group, replacement)
            if days is not None:
                self.shifts.append((gold.id, patient, days))
                if days:
                    moved.append(group.members[0])
        counts = token_counts(alignment, spans, moved)
        self.totals += counts
        self.formats += conforming
        self.documents.append((gold.id, counts, conforming))

    def _conforms(self, text: str, group: Replaced, replacement: str) -> bool:
        strategies = {name for span in group.members for name in self.steps.strategies.get(span.label, ())}
        if not strategies:  # a type the configuration does not name: nothing says what it should be
            return False
        original = text[group.start : group.end]
        expected = None
        if SURROGATE_STRATEGY not in strategies:
            members = [
                Annotation("", Span(s.start - group.start, s.end - group.start), s.label, confidence=100,
                           attributes={"dateFormat": s.subtype} if s.label == "date" and s.subtype else {})
                for s in group.members
            ]  # fmt: skip
            try:
                expected, _ = deidentify(original, members, self.steps.api)
            except StepError:
                self.unexpected += 1
        return conforms(strategies, original, replacement, expected)

    def finish(self) -> list[str]:
        """Per-document rows (date shifts need every note of a patient first); the run's warnings."""
        shifted = consistent_shifts(self.shifts)
        for document, counts, conforming in self.documents:
            shifts = shifted.get(document, Rate())
            self.date_shifts += shifts
            if self.keep_documents:
                self.per_document += _rows(counts, conforming, shifts, document=document)
        if self.unexpected:
            return [f"{self.unexpected} replaced PHI spans could not be de-identified as configured (a date "
                    "outside the years 1-9999 once shifted): scored as not following it"]  # fmt: skip
        return []

    def score_rows(self) -> list[Row]:
        rows = _rows(self.totals, self.formats, self.date_shifts)
        rows += [{"metric": "residual", "label": k, **_rate(v)} for k, v in self.totals.residual.items()]
        rows += [{"metric": "hipaa_residual", "label": k, **_rate(v)} for k, v in self.totals.hipaa_residual.items()]
        return rows


def _rows(counts: TokenCounts, conforming: Rate, shifts: Rate, **naming: str) -> list[Row]:
    """The rows of one document (``document=…``) or of the corpus: the token counts and every rate."""
    residual = sum(counts.residual.values(), Rate())
    hipaa = sum(counts.hipaa_residual.values(), Rate())
    rates = {
        "residual": residual,
        "hipaa_residual": hipaa,
        "over_redaction": counts.over_redaction,
        "alignment": counts.alignment,
        "format": conforming,
        "date_shift": shifts,
    }
    rows: list[Row] = [
        {**naming, "metric": "hipaa_token", **counts.hipaa_token.fields()},
        {**naming, "metric": "token", **counts.token.fields()},
    ]
    return rows + [{**naming, "metric": metric, **_rate(rate)} for metric, rate in rates.items()]


def _rate(rate: Rate) -> Row:
    return {"part": rate.part, "whole": rate.whole, "rate": rate.rate}


def _shift(text: str, group: Replaced, replacement: str) -> int | None:
    """Days a lone gold date was moved by, when both it and its replacement write a whole date; else None."""
    if len(group.members) != 1 or group.members[0].label != "date":
        return None
    span = group.members[0]
    date_format = span.subtype if isinstance(span.subtype, str) else None
    before, after = date_of(text[span.start : span.end], date_format), date_of(replacement.strip(), date_format)
    if before is None or after is None:
        return None
    return (after - before).days
