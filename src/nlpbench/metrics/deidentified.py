"""Counts of a de-identified note against its original and gold PHI: residual PHI, over-redaction, format,
date shifts and the alignment that relates the two texts.

Not the i2b2 2014 *tag* counts (those are :mod:`nlpbench.metrics.deid`): here the prediction is a text,
the note after de-identification, and what is counted is what of the original survives in it.

**Tokens** are runs of letters and digits (``[^\\W_]+``: the i2b2 scripts' ``[a-zA-Z0-9]+`` on ASCII text,
letters of any script beside). A token of the original is **PHI** when it overlaps a gold PHI span, of
that span's type (the first span by start when several overlap it), else non-PHI.

**Alignment** (:func:`align`): the original and the de-identified text, as sequences of units (tokens,
runs of white space, runs of one other character), are aligned by a longest common subsequence
(rapidfuzz's ``Indel.opcodes``, the alignment of the fewest insertions and deletions, bit-parallel: 0.1 s
for two 10,000-character notes where :class:`difflib.SequenceMatcher` takes 28 s): a token of the original is
**kept** when a matching block pairs it with an equal token of the de-identified text, **changed**
(removed or replaced) otherwise. Kept tokens anchor the texts to each other, so a span of the original maps
to the stretch of the de-identified text between the kept tokens around it (:meth:`Alignment.region`),
whatever the lengths of the replacements before it.

Per document, each a value that adds with ``+``:

- ``token`` (:class:`~nlpbench.metrics.counts.PRF`): TP = PHI tokens changed, FN = PHI tokens kept
  (residual; a token of a date moved to another day is changed, :func:`token_counts`), FP = non-PHI
  tokens changed (over-redaction); recall = TP / (TP + FN) is the share of PHI
  tokens removed or replaced, the token recall the de-identification literature reports;
- ``hipaa_token``: the same over tokens of HIPAA PHI (:func:`hipaa_category`); FP as in ``token``;
- ``residual`` (:class:`Rate`) per type and per HIPAA category: PHI tokens kept / PHI tokens;
- ``over_redaction``: non-PHI tokens changed / non-PHI tokens;
- ``alignment``: tokens of the original kept / tokens of the original;
- ``format``: replaced PHI spans that follow the configured strategy / replaced PHI spans (:func:`conforms`);
- ``date_shift``: shifted dates whose shift is their patient's most common shift / shifted dates read on
  both sides (:func:`consistent_shifts`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from rapidfuzz.distance import Indel

from nlpbench.metrics.counts import PRF, safe_div
from nlpbench.model import HIPAA_LOCATION

#: A token: a run of letters and digits.
TOKEN = re.compile(r"[^\W_]+")
#: HIPAA's identifier (45 CFR 164.514(b)(2)) of each identifier subtype of the NLP Sandbox types.
HIPAA_IDS = {
    "account": "account numbers",
    "bio_id": "biometric identifiers",
    "device": "device identifiers",
    "health_plan": "health plan numbers",
    "id_number": "other unique numbers",
    "license": "certificate/license numbers",
    "medical_record": "medical record numbers",
    "ssn": "social security numbers",
    "vehicle": "vehicle identifiers",
    "other": "other unique numbers",
}
HIPAA_CONTACTS = {
    "email": "email addresses",
    "fax": "fax numbers",
    "ip_address": "IP addresses",
    "phone": "telephone numbers",
    "url": "web URLs",
    "other": "other unique numbers",
}


def hipaa_category(label: str, subtype: object = None) -> str | None:
    """The HIPAA Safe Harbor identifier a gold PHI annotation is, or None when it is not one.

    ``person_name`` is *names*; ``date`` *dates*; ``location`` *geographic subdivisions* when its
    ``locationType`` is one of HIPAA's (:data:`nlpbench.model.HIPAA_LOCATION`: city, street, zip,
    organisation), else None (a state, a country, a hospital, or no subtype); ``id`` and ``contact`` by
    their subtype (:data:`HIPAA_IDS`, :data:`HIPAA_CONTACTS`), one without a known subtype being *other
    unique numbers*.
    """
    if label == "person_name":
        return "names"
    if label == "date":
        return "dates"
    if label == "location":
        return "geographic subdivisions" if HIPAA_LOCATION.get(str(subtype), False) else None
    table = HIPAA_IDS if label == "id" else HIPAA_CONTACTS if label == "contact" else None
    if table is None:
        return None
    return table.get(str(subtype), "other unique numbers")


def tokens(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each token (:data:`TOKEN`) of ``text``, in order."""
    return [match.span() for match in TOKEN.finditer(text)]


@dataclass(frozen=True, slots=True)
class Rate:
    """PART of WHOLE: rate = PART / WHOLE (0 when WHOLE is 0). Adds with ``+``."""

    part: int = 0
    whole: int = 0

    def __add__(self, other: Rate) -> Rate:
        return Rate(self.part + other.part, self.whole + other.whole)

    @property
    def rate(self) -> float:
        return safe_div(self.part, self.whole)


#: What the alignment compares: tokens, runs of white space (compared as one space), runs of one other
#: character (a mask of ``*`` is one unit).
UNIT = re.compile(r"[^\W_]+|\s+|([^\w\s]|_)\1*")


@dataclass(frozen=True)
class _Kept:
    """The kept tokens of the original (starts, ends) and where each is in the de-identified text."""

    starts: list[int]
    ends: list[int]
    new: list[tuple[int, int]]


@dataclass(frozen=True)
class Alignment:
    """The tokens of an original text and, for each, the token of the de-identified text it is paired with.

    ``old`` are the ``(start, end)`` of the original's tokens; ``paired[i]`` is the ``(start, end)`` in the
    de-identified text of the equal token paired with token ``i``, or None when token ``i`` was changed.
    Pairs keep their order.
    """

    original: str
    deidentified: str
    old: list[tuple[int, int]]
    paired: list[tuple[int, int] | None]

    _kept: _Kept = field(init=False, repr=False, compare=False)
    _bounds: tuple[list[int], list[int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kept = [(old, new) for old, new in zip(self.old, self.paired, strict=True) if new is not None]
        starts = [old[0] for old, _ in kept]
        object.__setattr__(self, "_kept", _Kept(starts, [old[1] for old, _ in kept], [new for _, new in kept]))
        object.__setattr__(self, "_bounds", ([s for s, _ in self.old], [e for _, e in self.old]))

    def kept(self, index: int) -> bool:
        """Whether original token ``index`` survives in the de-identified text."""
        return self.paired[index] is not None

    def kept_within(self, start: int, end: int) -> bool:
        """Whether a kept token of the original lies within ``[start, end)``."""
        i = bisect_left(self._kept.starts, start)
        return i < len(self._kept.starts) and self._kept.ends[i] <= end

    def changed_within(self, start: int, end: int) -> bool:
        """Whether a token of the original overlapping ``[start, end)`` was changed, or none overlaps it."""
        starts, ends = self._bounds
        inside = range(bisect_right(ends, start), bisect_left(starts, end))  # from the first token ending after start
        return not inside or any(self.paired[i] is None for i in inside)

    def region(self, start: int, end: int) -> tuple[int, int]:
        """The stretch ``[new_start, new_end)`` of the de-identified text that stands where ``[start, end)``
        of the original stood: from the end of the last kept token ending at or before ``start`` (plus the
        original's text between them when the de-identified text repeats it) to the start of the first kept
        token starting at or after ``end`` (minus the same on that side). Offsets of both texts are
        compared through it when replacements change lengths."""
        kept = self._kept
        i = bisect_right(kept.ends, start) - 1  # the last kept token ending at or before start
        j = bisect_left(kept.starts, end)  # the first kept token starting at or after end
        left = (kept.ends[i], kept.new[i][1]) if i >= 0 else None
        right = (kept.starts[j], kept.new[j][0]) if j < len(kept.starts) else None
        old_left, new_left = left or (0, 0)
        old_right, new_right = right or (len(self.original), len(self.deidentified))
        gap = self.original[old_left:start]
        if self.deidentified.startswith(gap, new_left) and new_left + len(gap) <= new_right:
            new_left += len(gap)
        gap = self.original[end:old_right]
        if gap and self.deidentified.endswith(gap, new_left, new_right):
            new_right -= len(gap)
        return new_left, new_right


def _units(text: str) -> tuple[list[tuple[int, int]], list[str]]:
    spans, keys = [], []
    for match in UNIT.finditer(text):
        spans.append(match.span())
        keys.append(" " if match.group().isspace() else match.group())
    return spans, keys


def align(original: str, deidentified: str) -> Alignment:
    """The token alignment of ``original`` and ``deidentified`` (see the module's docstring).

    The sequences matched are the texts' units (:data:`UNIT`), not their tokens alone, so that the white
    space and punctuation around a token tell two equal tokens apart (``Chloe Chloe`` with its first word
    masked keeps its second).
    """
    old_units, old_keys = _units(original)
    new_units, new_keys = _units(deidentified)
    paired_units: dict[int, tuple[int, int]] = {}
    for opcode in Indel.opcodes(old_keys, new_keys):
        if opcode.tag == "equal":
            for k in range(opcode.src_end - opcode.src_start):
                paired_units[opcode.src_start + k] = new_units[opcode.dest_start + k]
    old, paired = [], []
    for index, (start, end) in enumerate(old_units):
        if TOKEN.fullmatch(original, start, end):
            old.append((start, end))
            paired.append(paired_units.get(index))
    return Alignment(original, deidentified, old, paired)


@dataclass(frozen=True)
class GoldSpan:
    """A gold PHI span of the original: its offsets, type, subtype and HIPAA category (None: not HIPAA)."""

    start: int
    end: int
    label: str
    subtype: object = None

    @property
    def category(self) -> str | None:
        return hipaa_category(self.label, self.subtype)


@dataclass
class TokenCounts:
    """One document's token counts (see the module's docstring); adds with ``+``."""

    token: PRF = field(default_factory=PRF)
    hipaa_token: PRF = field(default_factory=PRF)
    residual: dict[str, Rate] = field(default_factory=dict)
    hipaa_residual: dict[str, Rate] = field(default_factory=dict)
    over_redaction: Rate = Rate()
    alignment: Rate = Rate()

    def __add__(self, other: TokenCounts) -> TokenCounts:
        return TokenCounts(
            self.token + other.token,
            self.hipaa_token + other.hipaa_token,
            _added(self.residual, other.residual),
            _added(self.hipaa_residual, other.hipaa_residual),
            self.over_redaction + other.over_redaction,
            self.alignment + other.alignment,
        )


def _added(one: dict[str, Rate], two: dict[str, Rate]) -> dict[str, Rate]:
    return {key: one.get(key, Rate()) + two.get(key, Rate()) for key in sorted({*one, *two})}


def token_counts(alignment: Alignment, gold: Sequence[GoldSpan], moved: Collection[GoldSpan] = ()) -> TokenCounts:
    """The token counts of one de-identified note: each original token PHI or not (by ``gold``), kept or not.

    The tokens of the spans in ``moved`` count as changed even where the alignment keeps them: a date
    shifted to another day is replaced, though ``March 2069`` shifted by 30 days keeps its year's token.
    """
    shifted = {(g.start, g.end) for g in moved}
    ordered = sorted(gold, key=lambda g: (g.start, g.end))
    counts = TokenCounts()
    residual: Counter[str] = Counter()
    phi: Counter[str] = Counter()
    hipaa_residual: Counter[str] = Counter()
    hipaa: Counter[str] = Counter()
    changed_plain = plain = kept_tokens = 0
    tp = fn = hipaa_tp = hipaa_fn = 0
    g = 0
    for index, (start, end) in enumerate(alignment.old):
        kept = alignment.kept(index)
        kept_tokens += kept
        while g < len(ordered) and ordered[g].end <= start:
            g += 1
        span = next((s for s in ordered[g:] if s.start < end and s.end > start and s.start < s.end), None)
        if span is None:
            plain += 1
            changed_plain += not kept
            continue
        kept = kept and (span.start, span.end) not in shifted
        phi[span.label] += 1
        residual[span.label] += kept
        tp, fn = tp + (not kept), fn + kept
        category = span.category
        if category is not None:
            hipaa[category] += 1
            hipaa_residual[category] += kept
            hipaa_tp, hipaa_fn = hipaa_tp + (not kept), hipaa_fn + kept
    counts.token = PRF(tp, changed_plain, fn)
    counts.hipaa_token = PRF(hipaa_tp, changed_plain, hipaa_fn)
    counts.residual = {label: Rate(residual[label], phi[label]) for label in sorted(phi)}
    counts.hipaa_residual = {name: Rate(hipaa_residual[name], hipaa[name]) for name in sorted(hipaa)}
    counts.over_redaction = Rate(changed_plain, plain)
    counts.alignment = Rate(kept_tokens, len(alignment.old))
    return counts


@dataclass(frozen=True)
class Replaced:
    """Gold PHI spans that stand in one stretch of the de-identified text (no kept token between them):
    the original ``[start, end)`` from the first span's start to the last one's end, its ``members``, and
    the de-identified stretch ``[new_start, new_end)`` that replaced it."""

    start: int
    end: int
    members: tuple[GoldSpan, ...]
    new_start: int
    new_end: int


def replaced_groups(alignment: Alignment, gold: Sequence[GoldSpan]) -> list[Replaced]:
    """The gold spans grouped by the stretch of de-identified text that replaced them (spans that overlap or
    have no kept token between them share one), for the groups of which at least one token changed (a
    group kept whole was not replaced: it is residual PHI)."""
    groups: list[tuple[int, int, list[GoldSpan]]] = []
    for span in sorted((g for g in gold if g.start < g.end), key=lambda g: (g.start, g.end)):
        if groups and (span.start < groups[-1][1] or not alignment.kept_within(groups[-1][1], span.start)):
            start, end, members = groups[-1]
            groups[-1] = (start, max(end, span.end), [*members, span])
        else:
            groups.append((span.start, span.end, [span]))
    return [
        Replaced(start, end, tuple(members), *alignment.region(start, end))
        for start, end, members in groups
        if alignment.changed_within(start, end)
    ]


#: The strategies a configured step may name: the 1.2.0 API's four, and surrogates (nlpbench's).
STRATEGIES = ("mask", "redact", "type", "date_offset", "surrogate")


def conforms(strategies: Iterable[str], original: str, replacement: str, expected: str | None) -> bool:
    """Whether ``replacement`` (a :class:`Replaced` group's de-identified stretch) follows the strategies
    configured for its members' types.

    With a surrogate among them: the replacement is not empty and holds none of the original's tokens (a
    surrogate is other text of the same kind; nothing else is checked of it). Otherwise it must be
    ``expected``, the original stretch de-identified as the configuration says (masking characters over
    its length, ``[TEXT_TYPE]``, nothing, or the date moved by the offset in its own format), runs of
    white space compared as one space and the ends stripped.
    """
    if "surrogate" in strategies:
        kept = {original[s:e] for s, e in tokens(original)}
        return bool(replacement.strip()) and not any(replacement[s:e] in kept for s, e in tokens(replacement))
    return expected is not None and _squeezed(replacement) == _squeezed(expected)


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def consistent_shifts(shifts: Iterable[tuple[str, str, int]]) -> dict[str, Rate]:
    """Per document, its shifted dates whose shift (in days) is their patient's most common one, of its
    shifted dates: ``shifts`` are ``(document, patient, days)``, one per date read on both sides.

    A patient's most common shift is the mode of the shifts of all their dates, in every document (ties:
    the smallest); a de-identifier that shifts a patient consistently scores 1 whatever the shift.
    """
    listed = list(shifts)
    by_patient: dict[str, Counter[int]] = {}
    for _, patient, days in listed:
        by_patient.setdefault(patient, Counter())[days] += 1
    mode = {patient: min(c, key=lambda d: (-c[d], d)) for patient, c in by_patient.items()}
    found: dict[str, Rate] = {}
    for document, patient, days in listed:
        found[document] = found.get(document, Rate()) + Rate(int(days == mode[patient]), 1)
    return found
