"""What the baseline annotators share: candidates, their resolution, the word lists.

Each finder (:mod:`~nlpbench.annotators.dates`, ``names``, ``locations``,
``ids``, ``contacts``) proposes :class:`Candidate` spans, each with a
confidence that grows with its evidence:

=========  ===============================================================
95–99      a pattern and an explicit cue ("MRN:", "Dr.", "Fax")
85–94      a pattern that is hardly ever anything else (ISO date, e-mail)
70–84      a pattern with weaker context (a lexicon name pair, "in 2069")
50–69      a lexicon hit or a shape with little context
=========  ===============================================================

Some candidates are *negatives* (``label=None``): a dosage, a drug, an
eponym, a blood pressure. :func:`resolve` keeps the most confident candidate
of every overlapping group, whatever its type, so a negative that wins
silences what it overlaps, and a phone number beats a date read inside it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from nlpbench.model import Annotation, Span, phi_type


@dataclass(frozen=True, slots=True)
class Candidate:
    """A proposed span ``[start, end)``; ``claim`` widens the extent that conflicts are judged on."""

    start: int
    end: int
    label: str | None
    confidence: float
    subtype: str | None = None
    claim: tuple[int, int] | None = None

    @property
    def extent(self) -> tuple[int, int]:
        return self.claim or (self.start, self.end)


def resolve(candidates: Iterable[Candidate]) -> list[Candidate]:
    """The candidates that win their overlaps: most confident first, then longest, then leftmost.

    A candidate is kept when its extent overlaps no candidate kept before it;
    negatives take part and are dropped at the end. The result is in text order.
    """
    ranked = sorted(candidates, key=lambda c: (-c.confidence, -(c.end - c.start), c.start, c.end, c.label or ""))
    kept: list[Candidate] = []
    starts: list[int] = []  # the kept extents, disjoint, sorted by start
    ends: list[int] = []
    for candidate in ranked:
        start, end = candidate.extent
        index = bisect.bisect_right(starts, start)
        if end <= start or (index and ends[index - 1] > start) or (index < len(starts) and starts[index] < end):
            continue
        starts.insert(index, start)
        ends.insert(index, end)
        kept.append(candidate)
    return sorted((c for c in kept if c.label is not None), key=lambda c: (c.start, c.end, c.label))


def to_annotations(doc_id: str, text: str, candidates: Iterable[Candidate], types: Iterable[str]) -> list[Annotation]:
    """Annotations of the given types, with their text, subtype attribute and confidence."""
    wanted = set(types)
    annotations = []
    for candidate in candidates:
        if candidate.label not in wanted:
            continue
        attributes = {}
        if candidate.subtype is not None:
            attributes[phi_type(candidate.label).type_attribute] = candidate.subtype
        span = Span(candidate.start, candidate.end)
        annotations.append(
            Annotation(doc_id, span, candidate.label, text[span.start : span.end], attributes, candidate.confidence)
        )
    return annotations


@cache
def words(name: str) -> frozenset[str]:
    """A word list of ``lexicons/`` (see its LICENSES.md), one entry a line, lower-cased."""
    content = (resources.files("nlpbench.annotators") / "lexicons" / f"{name}.txt").read_text(encoding="utf-8")
    return frozenset(line.strip().lower() for line in content.splitlines() if line.strip())


_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")


@lru_cache(maxsize=4)
def word_tokens(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, word)`` of every word of letters (with inner apostrophes and hyphens), cached per text."""
    return [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]


def without_possessive(word: str) -> str:
    """``Smith's`` → ``Smith``."""
    return word[:-2] if word.endswith(("'s", "’s")) else word


def first_words(phrases: Iterable[str]) -> frozenset[str]:
    """The lower-cased first word of each phrase, to find where a cue may start."""
    return frozenset(m.group().lower() for m in map(_WORD.match, phrases) if m)


def matches_at_words(pattern: re.Pattern, text: str, starts: frozenset[str]) -> list[re.Match]:
    """Matches of ``pattern`` tried only where a word in ``starts`` begins (much faster than a full scan)."""
    found, end = [], 0
    for start, _, word in word_tokens(text):
        if start >= end and word.lower() in starts:
            m = pattern.match(text, start)
            if m:
                found.append(m)
                end = m.end()
    return found


def alternation(values: Iterable[str]) -> str:
    """A regex alternation of literal values, longest first so that the longest one matches."""
    return "|".join(re.escape(v) for v in sorted(set(values), key=lambda v: (-len(v), v)))


def preceding(text: str, start: int, width: int = 40) -> str:
    """Up to ``width`` characters before ``start`` on the same line."""
    before = text[max(0, start - width) : start]
    return before.rsplit("\n", 1)[-1]


def following(text: str, end: int, width: int = 30) -> str:
    """Up to ``width`` characters after ``end`` on the same line."""
    return text[end : end + width].split("\n", 1)[0]


#: Units and words after a number that make it a quantity, not a date or an identifier.
UNIT = re.compile(
    r"\s*(?:mg|mcg|µg|ug|g|kg|lbs?|ml|mL|cc|l|L|units?|u|IU|iu|meq|mEq|mmol|mmHg|mm|cm|inches|%|tabs?|tablets?|"
    r"caps?|capsules?|puffs?|sprays?|drops?|gtts|patch(?:es)?|doses?|times|x|hours?|hrs?|days?|weeks?|wks?|months?|"
    r"mos?|years?|yrs?|minutes?|mins?|beats|bpm|kcal|calories|cells|copies|strength|dilution|score)\b",
)
