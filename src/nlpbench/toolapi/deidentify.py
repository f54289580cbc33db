"""De-identification steps over a note and its PHI annotations, with annotations re-based.

Steps run in order, each on the text and annotations the previous one left. A
step selects the annotations of its ``annotationTypes`` whose confidence is at
least ``confidenceThreshold``, merges overlapping ones into union spans, and
replaces each union once, by its one strategy:

- ``maskingCharConfig``: the masking character repeated over the union's length;
- ``redactConfig``: nothing;
- ``annotationTypeMaskConfig``: ``[TEXT_DATE]``, ``[TEXT_PERSON_NAME]``, … — the
  tag of the first type of ``annotationTypes`` found in the union (the tag the
  NLP Sandbox example de-identifier writes);
- ``dateOffsetConfig`` (``text_date`` only): the date moved by ``offsetDays`` and
  written in its own format (:mod:`nlpbench.toolapi.dateshift`); a span that is not a
  date it can read (``yesterday``) is left as it is.

Every annotation, selected or not, is then mapped onto the new text: an offset
before a replaced union stays, one after it moves by the change in length, and
one inside it moves to the boundary of the replacement (a start to its start,
an end to its end). So a replaced annotation covers exactly its replacement
(length 0 when redacted) and its ``text`` is always the new text it covers.
Merging unions first makes the result independent of annotation order and
never erases text outside the selected spans.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from nlpbench.errors import Kind, NlpbenchError
from nlpbench.model import Annotation, Span
from nlpbench.toolapi.dateshift import DateOutOfRange, shift_date
from nlpbench.toolapi.schemas import ANNOTATION_TYPES, STRATEGIES, DeidentificationStep

#: The steps nlpbench asks a de-identifier for when nothing else is configured: every PHI type replaced by its
#: type tag (``[TEXT_DATE]``, …), a strategy every 1.2.0 de-identifier serves (the NLP Sandbox example
#: serves no date offset).
DEFAULT_STEPS: tuple[dict, ...] = ({"annotationTypes": list(ANNOTATION_TYPES), "annotationTypeMaskConfig": {}},)


class StepError(NlpbenchError, ValueError):
    """A step that cannot be carried out as asked (the request is at fault); names offsets, never text."""

    kind = Kind.input


@dataclass(frozen=True)
class Replacement:
    """Text ``[start, end)`` of the step's input becomes ``text``."""

    start: int
    end: int
    text: str


class OffsetMap:
    """Maps offsets of a text onto the text after non-overlapping, sorted replacements."""

    def __init__(self, replacements: Sequence[Replacement]):
        self._replacements = list(replacements)
        self._starts = [r.start for r in self._replacements]
        self._new_starts: list[int] = []
        self._shift_after: list[int] = []
        shift = 0
        for r in self._replacements:
            self._new_starts.append(r.start + shift)
            shift += len(r.text) - (r.end - r.start)
            self._shift_after.append(shift)

    def start(self, offset: int) -> int:
        """Where an annotation starting at ``offset`` starts in the new text."""
        i = bisect_right(self._starts, offset) - 1
        if i < 0:
            return offset
        if offset < self._replacements[i].end:
            return self._new_starts[i]
        return offset + self._shift_after[i]

    def end(self, offset: int) -> int:
        """Where an annotation ending at ``offset`` ends in the new text."""
        i = bisect_left(self._starts, offset) - 1
        if i < 0:
            return offset
        r = self._replacements[i]
        if offset < r.end:
            return self._new_starts[i] + len(r.text)
        return offset + self._shift_after[i]


def apply_replacements(text: str, replacements: Sequence[Replacement]) -> str:
    pieces, position = [], 0
    for r in replacements:
        pieces += [text[position : r.start], r.text]
        position = r.end
    pieces.append(text[position:])
    return "".join(pieces)


def deidentify(
    text: str, annotations: Sequence[Annotation], steps: Sequence[DeidentificationStep]
) -> tuple[str, list[Annotation]]:
    """The text after every step, and every annotation re-based onto it."""
    current = list(annotations)
    for number, step in enumerate(steps, 1):
        strategy = _strategy(step, number)
        labels = [t.removeprefix("text_") for t in step.annotationTypes]
        selected = [
            a
            for a in current
            if a.label in labels and (a.confidence or 0) >= step.confidenceThreshold and a.span.length
        ]
        replacements = [
            Replacement(start, end, strategy(text[start:end], members, labels))
            for start, end, members in _unions(selected)
        ]
        mapping = OffsetMap(replacements)
        text = apply_replacements(text, replacements)
        current = [_moved(a, mapping, text) for a in current]
    return text, current


Strategy = Callable[[str, list[Annotation], list[str]], str]


def check_steps(steps: Sequence[DeidentificationStep]) -> None:
    """Refuse, as :func:`deidentify` would, steps it cannot carry out on any note: none at all, a step without
    exactly one strategy, a date offset for types other than ``text_date`` (:class:`StepError`)."""
    if not steps:
        raise StepError("no de-identification steps: give at least one")
    for number, step in enumerate(steps, 1):
        _strategy(step, number)


def _strategy(step: DeidentificationStep, number: int) -> Strategy:
    given = [name for name in STRATEGIES if getattr(step, name) is not None]
    if len(given) != 1:
        found = " and ".join(given) if given else "none"
        raise StepError(f"deidentificationSteps[{number - 1}]: give exactly one of {', '.join(STRATEGIES)} ({found})")
    if step.maskingCharConfig is not None:
        char = step.maskingCharConfig.maskingChar
        return lambda covered, _members, _labels: char * len(covered)
    if step.redactConfig is not None:
        return lambda _covered, _members, _labels: ""
    if step.annotationTypeMaskConfig is not None:
        return _type_tag
    assert step.dateOffsetConfig is not None  # the one strategy left
    others = [t for t in step.annotationTypes if t != "text_date"]
    if others:
        raise StepError(
            f"deidentificationSteps[{number - 1}]: dateOffsetConfig applies to text_date only, not {', '.join(others)}"
        )
    return _date_shifter(step.dateOffsetConfig.offsetDays, number)


def _type_tag(_covered: str, members: list[Annotation], labels: list[str]) -> str:
    present = {a.label for a in members}
    label = next(label for label in labels if label in present)
    return f"[TEXT_{label.upper()}]"


def _date_shifter(offset_days: int, number: int) -> Strategy:
    def shift(covered: str, members: list[Annotation], _labels: list[str]) -> str:
        widest = max(members, key=lambda a: (a.span.length, -a.start))
        try:
            shifted = shift_date(covered, offset_days, widest.attributes.get("dateFormat"))
        except DateOutOfRange as error:
            start, end = min(a.start for a in members), max(a.end for a in members)
            raise StepError(f"deidentificationSteps[{number - 1}]: the date at {start}-{end}: {error}") from None
        return covered if shifted is None else shifted

    return shift


def _unions(annotations: list[Annotation]) -> list[tuple[int, int, list[Annotation]]]:
    """Overlapping annotations merged: ``(start, end, members)`` in text order."""
    unions: list[tuple[int, int, list[Annotation]]] = []
    for a in sorted(annotations, key=lambda a: (a.start, a.end)):
        if unions and a.start < unions[-1][1]:
            start, end, members = unions[-1]
            unions[-1] = (start, max(end, a.end), [*members, a])
        else:
            unions.append((a.start, a.end, [a]))
    return unions


def _moved(annotation: Annotation, mapping: OffsetMap, text: str) -> Annotation:
    start = mapping.start(annotation.start)
    end = max(start, mapping.end(annotation.end))
    return replace(annotation, span=Span(start, end), text=text[start:end])
