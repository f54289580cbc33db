"""Entity linking: a system's (mention, QID) links against gold entities with alternative spans.

A gold entity offers up to three (mention, QID) choices, most specific
first; a mode says which of them count and how a predicted mention matches
a gold one:

- ``strong``: the primary choice only, mentions equal;
- ``weak``: the primary choice only, either mention contained in the other;
- ``flex``: every choice, mentions equal; a prediction matched on choice
  ``i`` is correct with the QID of choice ``i`` or of any earlier, more
  specific choice.

Choices whose mention or QID is missing are dropped first; a gold entity
with no choice left is not scored in that mode. Two countings are defined,
chosen by the profiles of :mod:`nlpbench.profiles.linking`:

- :func:`count_one_to_one` (``standard``): predictions and gold entities are
  paired one to one, as many correct pairs as possible; TP = correct pairs,
  FP = every other prediction, FN = every other gold entity (so a wrong QID
  is one FP and one FN, as GERBIL's strong annotation match counts it);
- :func:`count_first_match` (``trusted-ke``): each gold entity on its own
  finds the first choice any prediction matches and the first prediction, in
  file order, that matches it; TP when that prediction's QID is accepted,
  FP when not, FN when nothing matches. Predictions are never used up and
  predictions that match nothing count nowhere.

P = TP / (TP + FP), R = TP / (TP + FN), F1 = 2PR / (P + R).

Each matched (gold, prediction) pair is also kept for ontology similarity:
the gold QID of the matched choice against the predicted QID.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import fmean

from nlpbench.metrics.assignment import best_pairs
from nlpbench.metrics.counts import PRF
from nlpbench.model import GoldEntity, LinkedMention

MODES = ("strong", "weak", "flex")


def equal(predicted: str, gold: str) -> bool:
    return predicted == gold


def either_contains(predicted: str, gold: str) -> bool:
    return predicted in gold or gold in predicted


@dataclass(frozen=True, slots=True)
class Mode:
    """Which gold choices count and how mentions match."""

    name: str
    matches: Callable[[str, str], bool]
    all_choices: bool


MODE: dict[str, Mode] = {
    "strong": Mode("strong", equal, all_choices=False),
    "weak": Mode("weak", either_contains, all_choices=False),
    "flex": Mode("flex", equal, all_choices=True),
}


def choices(entity: GoldEntity, mode: Mode) -> list[tuple[str, str]]:
    """The (mention, QID) choices a mode scores: the primary or all, without those missing a part."""
    offered = entity.choices if mode.all_choices else entity.choices[:1]
    return [(m, q) for m, q in offered if m is not None and q is not None]


def accepted(kept: Sequence[tuple[str, str]], index: int, mode: Mode) -> set[str]:
    """The QIDs correct for a prediction matched on choice ``index``: it and, in flex, every earlier one."""
    return {q for _, q in kept[: index + 1]} if mode.all_choices else {kept[index][1]}


@dataclass(frozen=True, slots=True)
class LinkPair:
    """A gold entity and the prediction matched to it, for similarity."""

    doc_id: str
    predicted_mention: str
    gold_mention: str
    gold_qid: str
    predicted_qid: str


@dataclass
class LinkCounts:
    """TP/FP/FN of one mode in one document, the matched pairs, and the gold entities not scored."""

    prf: PRF = field(default_factory=PRF)
    pairs: list[LinkPair] = field(default_factory=list)
    unscored: int = 0


Counting = Callable[[Sequence[GoldEntity], Sequence[LinkedMention], Mode], LinkCounts]


def _first_match(kept: list[tuple[str, str]], pred: Sequence[LinkedMention], mode: Mode) -> tuple[int, int] | None:
    for i, (mention, _) in enumerate(kept):
        for j, p in enumerate(pred):
            if mode.matches(p.mention, mention):
                return i, j
    return None


def count_first_match(gold: Sequence[GoldEntity], pred: Sequence[LinkedMention], mode: Mode) -> LinkCounts:
    """trusted_ke's ``calculate_precision_recall_f1``: one TP, FP or FN per scored gold entity."""
    result = LinkCounts()
    tp = fp = fn = 0
    for entity in gold:
        kept = choices(entity, mode)
        if not kept:
            result.unscored += 1
            continue
        found = _first_match(kept, pred, mode)
        if found is None:
            fn += 1
            continue
        i, j = found
        p = pred[j]
        if p.identifier in accepted(kept, i, mode):
            tp += 1
        else:
            fp += 1
        result.pairs.append(LinkPair(entity.doc_id, p.mention, kept[i][0], kept[i][1], p.identifier))
    result.prf = PRF(tp, fp, fn)
    return result


def count_one_to_one(gold: Sequence[GoldEntity], pred: Sequence[LinkedMention], mode: Mode) -> LinkCounts:
    """One-to-one pairing with the most correct links, then the most mention-only matches."""
    result = LinkCounts()
    scored = []
    for entity in gold:
        kept = choices(entity, mode)
        if kept:
            scored.append((entity, kept))
        else:
            result.unscored += 1
    heavy = len(scored) + len(pred) + 1

    def judge(item: tuple[GoldEntity, list[tuple[str, str]]], p: LinkedMention) -> tuple[int, int | None]:
        """The weight of a pair and the choice it matched on (None: no match)."""
        _, kept = item
        matched = [i for i, (mention, _) in enumerate(kept) if mode.matches(p.mention, mention)]
        correct = [i for i in matched if p.identifier in accepted(kept, i, mode)]
        if correct:
            return heavy, correct[0]
        return (1, matched[0]) if matched else (0, None)

    pairs = best_pairs(scored, pred, lambda item, p: judge(item, p)[0])
    tp = sum(1 for *_, w in pairs if w == heavy)
    for i, j, _ in pairs:
        (entity, kept), p = scored[i], pred[j]
        index = judge(scored[i], p)[1]
        assert index is not None  # best_pairs keeps pairs of positive weight, which matched a choice
        result.pairs.append(LinkPair(entity.doc_id, p.mention, kept[index][0], kept[index][1], p.identifier))
    result.prf = PRF(tp, len(pred) - tp, len(scored) - tp)
    return result


Similarity = Callable[[str, str], float | None]


@dataclass(frozen=True, slots=True)
class SimilarityMean:
    """The mean similarity over matched pairs and what it was computed from."""

    pairs: int
    unscored: int
    averaged: int
    similarity: float | None


def mean_similarity(pairs: Sequence[LinkPair], similarity: Similarity, *, best_per_mention: bool) -> SimilarityMean:
    """Mean of ``similarity(gold QID, predicted QID)`` over the pairs it can score.

    ``best_per_mention`` first keeps, of all pairs of one predicted mention
    string in one document, the one with the highest score, as trusted_ke's
    ``get_class_score`` and ``get_jc_score`` do (a mention that matched
    several gold entities counts once). None when no pair can be scored.
    """
    scores = [similarity(pair.gold_qid, pair.predicted_qid) for pair in pairs]
    unscored = sum(score is None for score in scores)
    if best_per_mention:
        best: dict[tuple[str, str], float] = {}
        for pair, score in zip(pairs, scores, strict=True):
            key = (pair.doc_id, pair.predicted_mention)
            if score is not None and (key not in best or score > best[key]):
                best[key] = score
        kept = list(best.values())
    else:
        kept = [score for score in scores if score is not None]
    return SimilarityMean(len(pairs), unscored, len(kept), fmean(kept) if kept else None)
