"""Grounding: placing the mentions an LLM returned (text and type, no offsets) in the note they came from.

Each distinct mention (its text stripped, with its type; a mention listed
twice is placed once) goes through three stages, and the first that finds it
wins:

1. **exact** — every occurrence of the mention's text in the note
   (``str.find``, non-overlapping, left to right) that does not start or end
   inside a word (``Ann`` is not placed in ``Annual``);
2. **normalised** — every occurrence after both sides are lower-cased and
   each run of white space is made one space (``"JOHN  smith"`` finds
   ``"John\\nSmith"``); the spans are mapped back to the note's offsets;
3. **fuzzy** — the best alignment of the normalised mention in the
   normalised note by RapidFuzz's ``partial_ratio`` (an indel similarity
   :math:`100 \\cdot (1 - d_{\\text{indel}} / (|m| + |w|))` between the mention
   :math:`m` and the note's best window :math:`w`), accepted when it is at
   least :data:`FUZZY_MIN_SCORE`, only for mentions of
   :data:`FUZZY_MIN_CHARS` to :data:`FUZZY_MAX_CHARS` characters (a short
   mention matches anything; a long one costs time and is rarely PHI); the
   aligned text, widened to whole words, is then placed at each of its
   occurrences as in stage 2.

A mention no stage finds is **unplaced**: the model invented it (or
paraphrased it beyond the bound). It has no offsets, so the tool cannot send
it; it is counted, per type, and the platform scores it as a false positive
(:mod:`nlpbench.toolapi.account`). Every occurrence of a placed mention is
placed — a name repeated five times in a note is five annotations — since
the gold standard marks each.

The counts are of distinct mentions: ``exact + normalised + fuzzy +
unplaced`` is the number of distinct (text, type) pairs the model returned.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from nlpbench.toolapi.account import Account

#: The smallest partial-ratio score (0-100) a fuzzy placement needs.
FUZZY_MIN_SCORE = 90.0
#: Mentions shorter than this are never placed fuzzily: two characters off in four is another word.
FUZZY_MIN_CHARS = 5
#: Mentions longer than this are never placed fuzzily (the cost grows with mention × note length).
FUZZY_MAX_CHARS = 200
STAGES = ("exact", "normalised", "fuzzy")
_SPACE = re.compile(r"\s+")
#: The runs of white space that shorten the text when made one space: a single one keeps its length.
_LONG_SPACE = re.compile(r"\s{2,}")


@dataclass(frozen=True, slots=True)
class Mention:
    """What the model returned: a mention's text, its NLP Sandbox type and, if it gave one, its subtype."""

    text: str
    label: str
    subtype: str | None = None


@dataclass(frozen=True, slots=True)
class Placement:
    """One occurrence of a mention in the note: ``[start, end)`` and the stage that found it."""

    start: int
    end: int
    label: str
    subtype: str | None
    stage: str


@dataclass
class Grounded:
    """The placements of a note's mentions and, per type, how many distinct mentions each stage placed."""

    placements: list[Placement] = field(default_factory=list)
    counts: dict[str, Account] = field(default_factory=dict)


class Note:
    """A note's text and, computed on first use, its normalised form with the map back to the note's offsets.

    The map is kept as anchors, one per run of two or more white-space characters (a single one keeps
    its length): the normalised offset where the text after the run starts, and its offset in the note.
    Between anchors the two texts go in step, so offset ``i`` of the normalised text is
    ``note_anchor + i - normalised_anchor`` of the last anchor at or before ``i``.
    """

    def __init__(self, text: str):
        self.text = text
        self._normalised: str | None = None
        self._anchors: tuple[list[int], list[int]] = ([0], [0])

    @property
    def normalised(self) -> str:
        """The lower-cased text with each run of white space made one space (not stripped)."""
        if self._normalised is None:
            lowered = lower_same_length(self.text)
            normalised_at, note_at = self._anchors
            removed = 0
            for run in _LONG_SPACE.finditer(lowered):
                removed += run.end() - run.start() - 1
                normalised_at.append(run.end() - removed)
                note_at.append(run.end())
            self._normalised = _SPACE.sub(" ", lowered)
        return self._normalised

    def offset(self, i: int) -> int:
        """The note's offset of offset ``i`` of :attr:`normalised` (which must have been read)."""
        normalised_at, note_at = self._anchors
        k = bisect_right(normalised_at, i) - 1
        return note_at[k] + i - normalised_at[k]


def lower_same_length(text: str) -> str:
    """``text.lower()``, keeping each character whose lower case is not one character (``İ``) as it is."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(low if len(low := char.lower()) == 1 else char for char in text)


def normalise(text: str) -> str:
    """``text`` stripped, lower-cased and with each run of white space made one space."""
    return _SPACE.sub(" ", lower_same_length(text.strip()))


def occurrences(text: str, part: str) -> Iterator[int]:
    """The start of each non-overlapping occurrence of ``part`` in ``text`` that is not inside a word, left to
    right (``part`` not empty): where ``part`` starts (ends) with a letter or digit, the character before
    (after) it is not one, so ``Ann`` is not found in ``Annual``."""
    check_before, check_after = part[0].isalnum(), part[-1].isalnum()
    start = text.find(part)
    while start >= 0:
        end = start + len(part)
        if (check_before and start > 0 and text[start - 1].isalnum()) or (
            check_after and end < len(text) and text[end].isalnum()
        ):
            start = text.find(part, start + 1)
            continue
        yield start
        start = text.find(part, end)


def ground(text: str, mentions: Iterable[Mention]) -> Grounded:
    """Place each distinct mention at every occurrence in ``text`` (see the module's stages); count them per type."""
    note = Note(text)
    placements: list[Placement] = []
    stages: defaultdict[str, Counter[str]] = defaultdict(Counter)
    seen: set[tuple[str, str]] = set()
    for mention in mentions:
        wanted = mention.text.strip()
        if (wanted, mention.label) in seen:
            continue
        seen.add((wanted, mention.label))
        stage, spans = _place(note, wanted)
        stages[mention.label][stage] += 1
        placements.extend(Placement(s, e, mention.label, mention.subtype, stage) for s, e in spans)
    placements.sort(key=lambda p: (p.start, p.end, p.label))
    return Grounded(placements, {label: Account(**counted) for label, counted in stages.items()})


def _place(note: Note, wanted: str) -> tuple[str, list[tuple[int, int]]]:
    """The stage that places ``wanted`` in ``note`` and the spans it found; ``unplaced`` and none if none does."""
    if not wanted:
        return "unplaced", []
    exact = [(start, start + len(wanted)) for start in occurrences(note.text, wanted)]
    if exact:
        return "exact", exact
    target = normalise(wanted)
    found = _normalised_spans(note, target)
    if found:
        return "normalised", found
    aligned = _fuzzy(note, target)
    if aligned is not None:
        return "fuzzy", _normalised_spans(note, aligned)
    return "unplaced", []


def _normalised_spans(note: Note, target: str) -> list[tuple[int, int]]:
    """The note's spans whose normalised text is ``target`` (normalised), mapped back to the note's offsets."""
    return [(note.offset(i), note.offset(i + len(target) - 1) + 1) for i in occurrences(note.normalised, target)]


def _fuzzy(note: Note, target: str) -> str | None:
    """The normalised note's text that ``target`` (normalised) aligns with at :data:`FUZZY_MIN_SCORE` or better,
    widened to whole words, if any."""
    if not FUZZY_MIN_CHARS <= len(target) <= FUZZY_MAX_CHARS:
        return None
    normalised = note.normalised
    if len(target) > len(normalised):
        return None
    from rapidfuzz import fuzz  # the optional extra nlpbench[llm]; imported when a mention gets this far

    alignment = fuzz.partial_ratio_alignment(target, normalised, score_cutoff=FUZZY_MIN_SCORE)
    if alignment is None or alignment.dest_end <= alignment.dest_start:
        return None
    start, end = alignment.dest_start, alignment.dest_end
    while start > 0 and normalised[start - 1].isalnum() and normalised[start].isalnum():  # Prescot → Prescott
        start -= 1
    while end < len(normalised) and normalised[end].isalnum() and normalised[end - 1].isalnum():
        end += 1
    aligned = normalised[start:end].strip()
    return aligned or None
