"""Named-entity recognition scored as SemEval-2013 Task 9.1 did: strict, exact, partial and type.

Every predicted entity is compared with the gold entities of its document and
counted, in each of four schemes, as correct (COR), incorrect (INC), partial
(PAR) or spurious (SPU); gold entities no prediction accounts for are missed
(MIS):

- ``strict``: COR when boundaries and type both match, INC when they overlap otherwise;
- ``exact``: COR when the boundaries match, whatever the type; INC when they only overlap;
- ``partial``: COR when the boundaries match, PAR when they only overlap;
- ``type``: COR when they overlap and the type matches, INC when they overlap with another type.

POSSIBLE = COR + INC + PAR + MIS, ACTUAL = COR + INC + PAR + SPU,
precision = (COR + ½·PAR) / ACTUAL, recall = (COR + ½·PAR) / POSSIBLE,
F1 = 2·P·R / (P + R), each 0 on a zero denominator. Only ``partial`` ever
has PAR, so strict, exact and type are COR / ACTUAL and COR / POSSIBLE.

Which prediction accounts for which gold entity is what scorers disagree on;
three matchings are defined here and chosen by the profiles of
:mod:`nlpbench.profiles.ner`:

- :func:`match_optimal` (``standard``): one to one, the assignment with the
  most COR and then the most INC/PAR, so the result does not depend on order;
- :func:`match_greedy` (``nervaluate``): one to one, predictions in order,
  each taking the first suitable gold entity not yet taken, as the PyPI
  package nervaluate 1.2 does;
- :func:`match_first_overlap` (``trusted-ke``): many to one, each prediction
  judged against the first gold entity it overlaps, as davidsbatista's
  NER-Evaluation (which trusted_ke runs) does.

Entities are ``[start, end)`` in tokens when the input has tokens, else in characters.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress

from nlpbench.metrics.assignment import best_pairs
from nlpbench.metrics.counts import safe_div
from nlpbench.model import EntityColumns

SCHEMES = ("strict", "exact", "partial", "type")


@dataclass(frozen=True, slots=True, order=True)
class Entity:
    """A typed mention ``[start, end)``.

    An empty span overlaps nothing; the ner task gives each mention it cannot
    locate its own empty span before the document (``start = end < 0``), so
    that it is missed or spurious and equal to no other entity.
    """

    start: int
    end: int
    label: str

    def overlaps(self, other: Entity) -> bool:
        return self.start < other.end and other.start < self.end

    def same_bounds(self, other: Entity) -> bool:
        return self.start == other.start and self.end == other.end


@dataclass(frozen=True, slots=True)
class SemEval:
    """COR, INC, PAR, MIS and SPU of one scheme; adds with ``+``."""

    cor: int = 0
    inc: int = 0
    par: int = 0
    mis: int = 0
    spu: int = 0

    def __add__(self, other: SemEval) -> SemEval:
        return SemEval(
            self.cor + other.cor,
            self.inc + other.inc,
            self.par + other.par,
            self.mis + other.mis,
            self.spu + other.spu,
        )

    @property
    def possible(self) -> int:
        return self.cor + self.inc + self.par + self.mis

    @property
    def actual(self) -> int:
        return self.cor + self.inc + self.par + self.spu

    @property
    def precision(self) -> float:
        return safe_div(self.cor + 0.5 * self.par, self.actual)

    @property
    def recall(self) -> float:
        return safe_div(self.cor + 0.5 * self.par, self.possible)

    @property
    def f1(self) -> float:
        """2·P·R / (P + R) from the precision and recall, as every SemEval scorer computes it."""
        p, r = self.precision, self.recall
        return safe_div(2 * p * r, p + r)


_ONE = {kind: SemEval(**{kind: 1}) for kind in ("cor", "inc", "par", "mis", "spu")}

#: What one prediction that overlaps a gold entity counts in each scheme, by (same bounds, same type).
_OVERLAP_OUTCOME: dict[tuple[bool, bool], dict[str, str]] = {
    (True, True): {"strict": "cor", "exact": "cor", "partial": "cor", "type": "cor"},
    (True, False): {"strict": "inc", "exact": "cor", "partial": "cor", "type": "inc"},
    (False, True): {"strict": "inc", "exact": "inc", "partial": "par", "type": "cor"},
    (False, False): {"strict": "inc", "exact": "inc", "partial": "par", "type": "inc"},
}

Key = tuple[str, str | None]  # (scheme, label); label None = every entity


@dataclass(frozen=True)
class NerCounts:
    """SemEval counts by scheme and label (label None: all entities) for one document or a sum."""

    counts: Mapping[Key, SemEval] = field(default_factory=dict)

    def __add__(self, other: NerCounts) -> NerCounts:
        merged = dict(self.counts)
        for key, value in other.counts.items():
            merged[key] = merged.get(key, SemEval()) + value
        return NerCounts(merged)

    def get(self, scheme: str, label: str | None = None) -> SemEval:
        return self.counts.get((scheme, label), SemEval())

    def labels(self) -> list[str]:
        return sorted({label for _, label in self.counts if label is not None})


class _Tally:
    """Counts being collected for one document."""

    def __init__(self) -> None:
        self.counts: dict[Key, SemEval] = {}

    def add(self, scheme: str, kind: str, label: str | None = None) -> None:
        key = (scheme, label)
        self.counts[key] = self.counts.get(key, SemEval()) + _ONE[kind]

    def add_all(self, kinds: Mapping[str, str], label: str | None = None) -> None:
        for scheme, kind in kinds.items():
            self.add(scheme, kind, label)

    def result(self) -> NerCounts:
        return NerCounts(self.counts)


#: ``matcher(gold, pred, labels)``: the counts of one document; ``labels`` is the label set in force, if any.
Matcher = Callable[[Sequence[Entity], Sequence[Entity], Collection[str] | None], NerCounts]
SchemeCounts = Callable[[Sequence[Entity], Sequence[Entity]], Mapping[str, SemEval]]


def _only(entities: Iterable[Entity], labels: Collection[str] | None) -> list[Entity]:
    return [e for e in entities if labels is None or e.label in labels]


def _label_by_label(gold: Sequence[Entity], pred: Sequence[Entity], match: SchemeCounts) -> NerCounts:
    """``match`` on all entities, then on each label's gold and predicted entities alone (as nervaluate)."""
    counts: dict[Key, SemEval] = {(s, None): c for s, c in match(gold, pred).items()}
    for label in sorted({e.label for e in (*gold, *pred)}):
        sliced = match([e for e in gold if e.label == label], [e for e in pred if e.label == label])
        counts.update({(s, label): c for s, c in sliced.items()})
    return NerCounts(counts)


# --- standard: the optimal one-to-one assignment ---------------------------------------------------------------


#: When an overlapping pair is COR, by scheme; every other overlapping pair is INC (PAR in partial).
_FULL_MATCH: dict[str, Callable[[Entity, Entity], bool]] = {
    "strict": lambda g, p: g.same_bounds(p) and g.label == p.label,
    "exact": Entity.same_bounds,
    "partial": Entity.same_bounds,
    "type": lambda g, p: g.label == p.label,
}


def _optimal_scheme(gold: Sequence[Entity], pred: Sequence[Entity], scheme: str) -> SemEval:
    """One scheme's counts from the assignment that maximises COR, then the other overlapping pairs."""
    full = _FULL_MATCH[scheme]
    cor = weak = 0
    for gold_group, pred_group in _overlap_groups(gold, pred):
        if len(gold_group) == 1 and len(pred_group) == 1:  # the common case, without an assignment
            g, p = gold_group[0], pred_group[0]
            if g.overlaps(p):
                cor, weak = (cor + 1, weak) if full(g, p) else (cor, weak + 1)
            continue
        heavy = len(gold_group) + len(pred_group) + 1  # one COR outweighs any number of weaker pairs

        def weight(g: Entity, p: Entity, w: int = heavy) -> int:
            return (w if full(g, p) else 1) if g.overlaps(p) else 0

        pairs = best_pairs(gold_group, pred_group, weight)
        group_cor = sum(1 for *_, w in pairs if w == heavy)
        cor, weak = cor + group_cor, weak + len(pairs) - group_cor
    paired = cor + weak
    weak_kind = "par" if scheme == "partial" else "inc"
    return SemEval(cor=cor, **{weak_kind: weak}, mis=len(gold) - paired, spu=len(pred) - paired)


def _overlap_groups(gold: Sequence[Entity], pred: Sequence[Entity]) -> list[tuple[list[Entity], list[Entity]]]:
    """Split both sides into runs that no overlap connects, so that each assignment stays small."""
    tagged = sorted([(e.start, e.end, 0, e) for e in gold] + [(e.start, e.end, 1, e) for e in pred])
    groups: list[tuple[list[Entity], list[Entity]]] = []
    reach = None
    for start, end, side, entity in tagged:
        if reach is None or start >= reach:
            groups.append(([], []))
            reach = end
        reach = max(reach, end)
        groups[-1][side].append(entity)
    return groups


def match_optimal(gold: Sequence[Entity], pred: Sequence[Entity], labels: Collection[str] | None = None) -> NerCounts:
    """One to one: in each scheme the assignment with the most COR, then the most INC (PAR in partial).

    A pair counts only when its entities overlap. Per-label counts match
    each label's entities on their own, so they have no INC across labels.
    """
    return _label_by_label(gold, pred, lambda g, p: {scheme: _optimal_scheme(g, p, scheme) for scheme in SCHEMES})


# --- nervaluate 1.2: greedy one-to-one, predictions in order ----------------------------------------------------


def _sufficient(pred: Entity, gold: Entity, min_overlap_percent: float) -> bool:
    """nervaluate's overlap test: the shared part is at least ``min_overlap_percent`` of the gold entity."""
    if pred.start >= gold.end or gold.start >= pred.end:
        return False
    shared = min(pred.end, gold.end) - max(pred.start, gold.start)
    return shared / (gold.end - gold.start) * 100.0 >= min_overlap_percent


#: nervaluate's ``min_overlap_percent``: a prediction overlapping 1 % of a gold entity may take it.
MIN_OVERLAP_PERCENT = 1.0


def _greedy_scheme(gold: Sequence[Entity], pred: Sequence[Entity], scheme: str, min_overlap: float) -> SemEval:
    taken: set[int] = set()
    tally = {"cor": 0, "inc": 0, "par": 0, "spu": 0}
    weak_kind = "par" if scheme == "partial" else "inc"
    for p in pred:
        chosen, kind, closest = None, "spu", None
        for i, g in enumerate(gold):
            if i in taken or (g.start >= p.end or p.start >= g.end):  # taken, or no overlap at all
                continue
            overlapping = _sufficient(p, g, min_overlap)
            if scheme == "type":
                if not overlapping:
                    continue
                distance = abs(p.start - g.start) + abs(p.end - g.end)
                if g.label == p.label and (closest is None or distance < closest):
                    chosen, kind, closest = i, "cor", distance
                elif g.label != p.label and kind == "spu":
                    chosen, kind = i, "inc"
                continue
            if g.start == p.start and g.end == p.end and (scheme != "strict" or g.label == p.label):
                chosen, kind = i, "cor"
                break
            if overlapping and kind == "spu":
                chosen, kind = i, weak_kind
        tally[kind] += 1
        if chosen is not None:
            taken.add(chosen)
    return SemEval(tally["cor"], tally["inc"], tally["par"], len(gold) - len(taken), tally["spu"])


def match_greedy(
    gold: Sequence[Entity],
    pred: Sequence[Entity],
    labels: Collection[str] | None = None,
    *,
    min_overlap_percent: float = MIN_OVERLAP_PERCENT,
) -> NerCounts:
    """nervaluate 1.2's strategies, each a separate greedy pass with its own set of taken gold entities.

    A prediction takes the first untaken gold entity with the same
    boundaries (and, for strict, type) as COR; failing that, the first
    untaken gold entity it overlaps by at least ``min_overlap_percent`` of
    the gold entity's length, as INC (PAR for partial); failing that it is
    SPU. ``type`` takes, among untaken overlapping gold entities of its type,
    the one with the closest boundaries as COR, else the first of another
    type as INC. Gold entities never taken are MIS. Per-label counts match
    each label's entities on their own, as nervaluate does.
    """
    return _label_by_label(
        gold, pred, lambda g, p: {scheme: _greedy_scheme(g, p, scheme, min_overlap_percent) for scheme in SCHEMES}
    )


# --- matchings decided group by group ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupRule:
    """How a one-to-one matching decides each overlap group on its own, for :mod:`nlpbench.metrics.ner_batch`.

    A prediction only ever takes a gold entity it overlaps, so the groups that no overlap connects
    (:func:`_overlap_groups`) are matched independently and their counts add up: ``scheme_counts(gold,
    pred, scheme)`` scores one group (each side in its order). A group of one gold entity is settled by
    a formula. Each prediction *may take* the gold entity as COR or as INC (PAR in ``partial``): in
    ``type``, COR when they overlap *sufficiently* and share their type, INC when they overlap
    sufficiently with another type; in the other schemes COR when their boundaries match (and, for
    ``strict``, their type), else INC when they overlap sufficiently. *Sufficiently* is ``shared / gold
    length · 100 ≥ min_overlap_percent`` (nervaluate's test), or any overlap when
    ``min_overlap_percent`` is None. With ``in_order`` the first prediction (in reading order) that may
    take it takes it, as it may (the greedy matching); without, a prediction that may take it as COR
    does, else one that may as INC (the optimal one). Every other prediction is SPU; the gold entity is
    MIS when none takes it.
    """

    scheme_counts: Callable[[Sequence[Entity], Sequence[Entity], str], SemEval]
    min_overlap_percent: float | None
    in_order: bool


def _greedy_group(gold: Sequence[Entity], pred: Sequence[Entity], scheme: str) -> SemEval:
    return _greedy_scheme(gold, pred, scheme, MIN_OVERLAP_PERCENT)


#: The matchers that decide each overlap group on its own, and how.
BY_GROUP: Mapping[Matcher, GroupRule] = {
    match_greedy: GroupRule(_greedy_group, MIN_OVERLAP_PERCENT, in_order=True),
    match_optimal: GroupRule(_optimal_scheme, None, in_order=False),
}


# --- davidsbatista / trusted_ke: many to one, first overlap ------------------------------------------------------


def match_first_overlap(
    gold: Sequence[Entity], pred: Sequence[Entity], labels: Collection[str] | None = None
) -> NerCounts:
    """davidsbatista's ``compute_metrics``: each prediction judged on its own against the first gold it overlaps.

    For each prediction, in order: a gold entity equal in boundaries and
    type makes it COR in every scheme; otherwise the first gold entity, in
    gold order, with the same boundaries (and another type) or any overlap
    decides the outcome; otherwise the prediction is SPU. Gold entities are
    never consumed, so several predictions may count against one gold
    entity, each adding to POSSIBLE. Gold entities no prediction reached are MIS.

    Per-label counts follow the scorer: COR of an exact match goes to the
    predicted label, the outcomes of an overlap to the gold entity's label,
    MIS to the gold label, and every SPU to each label of ``labels`` (to
    each label of the document when there is no label set).
    """
    tally = _Tally()
    gold_set = set(gold)
    spurious_labels = sorted(labels if labels is not None else {e.label for e in (*gold, *pred)})
    reached: set[Entity] = set()
    for p in pred:
        if p in gold_set:
            reached.add(p)
            tally.add_all(_OVERLAP_OUTCOME[True, True])
            tally.add_all(_OVERLAP_OUTCOME[True, True], p.label)
            continue
        for g in gold:
            if g.same_bounds(p) or g.overlaps(p):
                reached.add(g)
                kinds = _OVERLAP_OUTCOME[g.same_bounds(p), g.label == p.label]
                tally.add_all(kinds)
                tally.add_all(kinds, g.label)
                break
        else:
            for scheme in SCHEMES:
                tally.add(scheme, "spu")
                for label in spurious_labels:
                    tally.add(scheme, "spu", label)
    for g in gold:
        if g not in reached:
            for scheme in SCHEMES:
                tally.add(scheme, "mis")
                tally.add(scheme, "mis", g.label)
    return tally.result()


def nested_first(gold: Sequence[Entity]) -> list[Entity]:
    """trusted_ke's ``sort_ents``: distinct gold entities, those that contain fewer shorter overlapping ones first.

    Identical entities collapse to one, in order of first appearance. Each
    entity scores the number of other entities that overlap it and are
    strictly shorter (counted over the list, so a repeated entity counts as
    often as it appears); a stable sort by that score puts nested entities
    before the longer ones holding them.
    """
    scores = dict.fromkeys(gold, 0)
    for a in gold:  # over the list, repeats included, as trusted_ke does
        for b in gold:
            if b != a and a.overlaps(b) and a.end - a.start > b.end - b.start:
                scores[a] += 1
    return sorted(scores, key=scores.__getitem__)


def entities_of(columns: EntityColumns) -> list[Entity]:
    """The entities of columns, in their order."""
    return list(map(Entity, columns.starts, columns.ends, columns.labels))


def columns_of(entities: Iterable[Entity]) -> EntityColumns:
    """Entities as columns, in their order."""
    columns = EntityColumns()
    for entity in entities:
        columns.starts.append(entity.start)
        columns.ends.append(entity.end)
        columns.labels.append(entity.label)
    return columns


def kept(columns: EntityColumns, labels: Collection[str] | None) -> EntityColumns:
    """The entities whose label is in ``labels`` (all when None), in their order."""
    if labels is None:
        return columns
    keep = [label in labels for label in columns.labels]
    return EntityColumns(
        list(compress(columns.starts, keep)), list(compress(columns.ends, keep)), list(compress(columns.labels, keep))
    )


def score_entities(
    gold: Sequence[Entity], pred: Sequence[Entity], matcher: Matcher, labels: Collection[str] | None = None
) -> NerCounts:
    """Counts of one document: both sides kept to ``labels`` (all when None), then matched."""
    return matcher(_only(gold, labels), _only(pred, labels), labels)
