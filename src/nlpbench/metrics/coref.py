"""Coreference metrics, one document at a time, as counts that add up over documents.

Every function takes the ``key`` and the ``response`` clusterings of one
document — sequences of clusters, a cluster being a sequence of hashable
mentions — and returns counts; scores come from the summed counts. With K the
key clusters, R the response clusters and ``|k ∩ r|`` the mentions they share:

- **mentions** (identification): R = |K̂ ∩ R̂| / |K̂|, P = |K̂ ∩ R̂| / |R̂| over
  the sets K̂, R̂ of distinct mentions;
- **MUC** (Vilain et al. 1995): R = Σ_k (|k| − |p(k)|) / Σ_k (|k| − 1) where
  p(k) is the partition of k by the response (a mention missing from it is a
  part of its own); P swaps the roles. The numerator is Σ_{k,r} max(0, |k∩r| − 1);
- **B³** (Bagga & Baldwin 1998): R = Σ_k Σ_r |k∩r|² / |k| ÷ Σ_k |k|,
  P = Σ_r Σ_k |k∩r|² / |r| ÷ Σ_r |r|;
- **CEAF** (Luo 2005): the one-to-one alignment g of key to response clusters
  that maximises Σ φ(k, g(k)) (found with scipy's ``linear_sum_assignment``, or
  its plain-Python equal for a small matrix, :mod:`nlpbench.metrics.assignment`);
  numerator = that maximum; **CEAFm** uses φ3(k, r) = |k∩r| with
  denominators Σ|k| and Σ|r|, **CEAFe** φ4(k, r) = 2|k∩r| / (|k| + |r|)
  with denominators |K| and |R|;
- **BLANC** (Recasens & Hovy 2011; Luo et al. 2014 for system mentions):
  coreference links C (pairs of mentions in one cluster) and
  non-coreference links N (pairs in two clusters) of each side;
  Rc = |Ck∩Cr| / |Ck|, Pc = |Ck∩Cr| / |Cr|, likewise Rn, Pn for N, each F the
  harmonic mean; BLANC = the mean of the coreference and non-coreference
  R, P and F (see :func:`blanc_scores` for the cases without links);
- **LEA** (Moosavi & Strube 2016): R = Σ_k |k| · resolved(k) / links(k) ÷ Σ_k |k|
  with links(k) = |k|(|k|−1)/2 and resolved(k) the links of k whose two
  mentions are in one response cluster; a singleton has one self-link,
  resolved when its mention is a singleton of the response too; P swaps roles;
- **CoNLL** = the mean of the MUC, B³ and CEAFe F1 (Pradhan et al. 2011).

These are the definitions of the reference scorer v8.01 (and its LEA branch),
which sums each metric's counts over documents. A mention may occur more than
once on a side (v8.01 keeps repeats of key mentions, and repeats of response
mentions that are not in the key): each occurrence then counts where the
reference counts it, as documented per function. :mod:`nlpbench.metrics.coref_e2e`
holds the variants of e2e-coref's ``metrics.py``.

:func:`without_repeats`, :func:`without_nested` and :func:`without_singletons`
prepare clusterings before scoring.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from nlpbench.metrics import assignment
from nlpbench.metrics.counts import safe_div

if TYPE_CHECKING:
    import numpy as np

Clusters = Sequence[Sequence[Hashable]]


class _Summable:
    """Counts that add field by field, so that documents sum into a corpus."""

    __slots__ = ()

    def __add__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return type(self)(*(getattr(self, name) + getattr(other, name) for name in self.__slots__))


@dataclass(frozen=True, slots=True)
class CorefCounts(_Summable):
    """Recall and precision as numerator/denominator pairs, summed over documents.

    recall = recall_num / recall_den, precision = precision_num / precision_den,
    each 0 when its denominator is 0; F1 = 2·P·R / (P + R), 0 when P + R = 0.
    """

    recall_num: float = 0
    recall_den: float = 0
    precision_num: float = 0
    precision_den: float = 0

    @property
    def recall(self) -> float:
        return safe_div(self.recall_num, self.recall_den)

    @property
    def precision(self) -> float:
        return safe_div(self.precision_num, self.precision_den)

    @property
    def f1(self) -> float:
        return f1(self.recall, self.precision)


def f1(recall: float, precision: float) -> float:
    """2·P·R / (P + R), computed in that order as the reference scorer does; 0 when P + R = 0."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


@dataclass(frozen=True, slots=True)
class BlancCounts(_Summable):
    """The link counts of BLANC: |Ck ∩ Cr|, |Ck|, |Cr| and |Nk ∩ Nr|, |Nk|, |Nr|, summed over documents."""

    coref_common: int = 0
    coref_key: int = 0
    coref_response: int = 0
    noncoref_common: int = 0
    noncoref_key: int = 0
    noncoref_response: int = 0

    @property
    def coref(self) -> CorefCounts:
        return CorefCounts(self.coref_common, self.coref_key, self.coref_common, self.coref_response)

    @property
    def noncoref(self) -> CorefCounts:
        return CorefCounts(self.noncoref_common, self.noncoref_key, self.noncoref_common, self.noncoref_response)


#: Which side's links decide that a BLANC part is left out (see :func:`blanc_scores`).
BLANC_PARTS = ("key", "both")


def blanc_scores(counts: BlancCounts, parts_from: str = "both") -> tuple[float, float, float]:
    """BLANC (recall, precision, F) from summed link counts.

    Coreference part: Rc, Pc, Fc = Fc(Rc, Pc); non-coreference part: Rn, Pn,
    Fn. BLANC = ((Rc + Rn)/2, (Pc + Pn)/2, (Fc + Fn)/2) — F is the mean of
    the two F, not the harmonic mean of R and P. A part without links is
    left out: with ``parts_from="both"`` (Luo et al. 2014) when neither key
    nor response has links of that kind, with ``parts_from="key"`` (v8.01)
    when the key has none, whatever the response has. With no part left,
    BLANC is 0.
    """
    if parts_from not in BLANC_PARTS:
        raise ValueError(f"parts_from must be one of {BLANC_PARTS}, not {parts_from!r}")
    coref, noncoref = counts.coref, counts.noncoref
    if parts_from == "key":
        has_coref, has_noncoref = counts.coref_key > 0, counts.noncoref_key > 0
    else:
        has_coref = counts.coref_key + counts.coref_response > 0
        has_noncoref = counts.noncoref_key + counts.noncoref_response > 0
    if has_coref and has_noncoref:
        return (
            (coref.recall + noncoref.recall) / 2,
            (coref.precision + noncoref.precision) / 2,
            (coref.f1 + noncoref.f1) / 2,
        )
    if has_coref or has_noncoref:
        part = coref if has_coref else noncoref
        return part.recall, part.precision, part.f1
    return 0.0, 0.0, 0.0


def conll_f1(muc_f1: float, b_cubed_f1: float, ceaf_e_f1: float) -> float:
    """The CoNLL-2012 score: (F1_MUC + F1_B³ + F1_CEAFe) / 3."""
    return (muc_f1 + b_cubed_f1 + ceaf_e_f1) / 3


# ---------------------------------------------------------------- metrics


class Overlap:
    """What the metrics read of one document's key and response, each computed once, when first asked for.

    ``key_where``/``response_where``: each mention → the index of the last cluster of that side holding
    it; ``response_groups[j]``: how many mentions (by position) of response cluster j each key cluster
    holds, per ``key_where`` (:func:`groups_in`), ``key_groups[i]`` the other way round; ``shared``:
    (i, j) → the occurrences of key cluster i's mentions in response cluster j, for the pairs that share
    a mention. Every metric takes one (``overlap=``) so that a document's metrics share it; without one,
    it makes its own.
    """

    def __init__(self, key: Clusters, response: Clusters):
        self.key, self.response = key, response

    @cached_property
    def key_where(self) -> dict[Hashable, int]:
        return _last_cluster(self.key)

    @cached_property
    def response_where(self) -> dict[Hashable, int]:
        return _last_cluster(self.response)

    @cached_property
    def response_groups(self) -> list[dict[int, int]]:
        return [groups_in(cluster, self.key_where) for cluster in self.response]

    @cached_property
    def key_groups(self) -> list[dict[int, int]]:
        return [groups_in(cluster, self.response_where) for cluster in self.key]

    @cached_property
    def response_sums(self) -> tuple[list[int], list[int]]:
        """For each response cluster, from its groups: its mentions found in the key (Σ n) and the pairs
        of them that one key cluster holds (Σ n(n − 1)/2)."""
        return _sums(self.response_groups)

    @cached_property
    def key_sums(self) -> tuple[list[int], list[int]]:
        """:attr:`response_sums` for each key cluster, in the response."""
        return _sums(self.key_groups)

    @cached_property
    def shared(self) -> dict[tuple[int, int], int]:
        if not self.repeats:  # each mention is in one cluster of each side: the key's groups say it
            return {(i, j): n for i, groups in enumerate(self.key_groups) for j, n in groups.items()}
        in_response: dict[Hashable, list[int]] = {}
        for j, cluster in enumerate(self.response):
            for mention in dict.fromkeys(cluster):
                in_response.setdefault(mention, []).append(j)
        common: Counter[tuple[int, int]] = Counter()
        for i, cluster in enumerate(self.key):
            for mention in cluster:
                for j in in_response.get(mention, ()):
                    common[i, j] += 1
        return common

    @cached_property
    def shared_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """``shared`` as arrays, one item per pair: its row and column in the matrix of the key and
        response clusters that share a mention (each side in its order), its count, and the sizes of
        its two clusters; None when no cluster shares a mention."""
        if not self.shared:
            return None
        import numpy as np

        pairs = np.array(list(self.shared), dtype=np.int64)
        common = np.fromiter(self.shared.values(), np.int64, len(self.shared))
        key_sizes = np.array([len(cluster) for cluster in self.key], np.int64)[pairs[:, 0]]
        response_sizes = np.array([len(cluster) for cluster in self.response], np.int64)[pairs[:, 1]]
        rows = np.unique(pairs[:, 0], return_inverse=True)[1]
        columns = np.unique(pairs[:, 1], return_inverse=True)[1]
        return rows, columns, common, key_sizes, response_sizes

    @cached_property
    def repeats(self) -> bool:
        """Whether a mention occurs twice on one side."""
        return _size(self.key) > len(self.key_where) or _size(self.response) > len(self.response_where)


def _sums(groups_of: list[dict[int, int]]) -> tuple[list[int], list[int]]:
    found = [sum(groups.values()) for groups in groups_of]
    pairs = [sum(n * (n - 1) // 2 for n in groups.values()) for groups in groups_of]
    return found, pairs


def _given(key: Clusters, response: Clusters, overlap: Overlap | None) -> Overlap:
    return Overlap(key, response) if overlap is None else overlap


def mention_identification(key: Clusters, response: Clusters, *, overlap: Overlap | None = None) -> CorefCounts:
    """Distinct mentions found: (|K̂ ∩ R̂|, |K̂|, |K̂ ∩ R̂|, |R̂|); a repeated mention counts once."""
    overlap = _given(key, response, overlap)
    key_mentions, response_mentions = overlap.key_where.keys(), overlap.response_where.keys()
    found = len(key_mentions & response_mentions)
    return CorefCounts(found, len(key_mentions), found, len(response_mentions))


def muc(key: Clusters, response: Clusters, *, overlap: Overlap | None = None) -> CorefCounts:
    """MUC link counts.

    As v8.01 counts them: a response mention is a common link when a later
    mention of its response cluster lies in the same key cluster (a mention in
    several key clusters belongs to the last); both numerators are that count;
    the denominators are Σ(|c| − 1) over the non-empty clusters of each side,
    repeats included.
    """
    overlap = _given(key, response, overlap)
    common = sum(overlap.response_sums[0]) - sum(map(len, overlap.response_groups))
    return CorefCounts(common, _links(key), common, _links(response))


def b_cubed(key: Clusters, response: Clusters, *, overlap: Overlap | None = None) -> CorefCounts:
    """B³ counts.

    As v8.01 computes them: for each occurrence of a mention m in a response
    cluster r, with k the (last) key cluster of m and c the occurrences of r
    that are in k, add c/|r| to the precision numerator and c/|k| to the
    recall numerator, in file order; the denominators are the number of
    mentions of each side, repeats included. Without repeats this is
    Σ|k∩r|²/|r| and Σ|k∩r|²/|k|.
    """
    overlap = _given(key, response, overlap)
    where, repeats = overlap.key_where, overlap.repeats
    members = [set(cluster) for cluster in key] if repeats else []
    recall_num = precision_num = 0.0
    for cluster, groups in zip(response, overlap.response_groups, strict=True):
        size = len(cluster)
        # without repeats, the occurrences of r in k are the groups' count (each mention in one key cluster)
        shared: dict[int, int] = {} if repeats else groups
        for mention in cluster:
            index = where.get(mention)
            if index is None:
                continue
            common = shared.get(index)
            if common is None:
                common = shared[index] = sum(1 for other in cluster if other in members[index])
            precision_num += common / size
            recall_num += common / len(key[index])
    return CorefCounts(recall_num, _size(key), precision_num, _size(response))


def ceaf_m(key: Clusters, response: Clusters, *, overlap: Overlap | None = None) -> CorefCounts:
    """CEAFm counts: (max Σφ3, Σ|k|, max Σφ3, Σ|r|), φ3(k, r) = the occurrences of k's mentions in r."""
    total = _alignment(_given(key, response, overlap), lambda common, k, r: common)
    return CorefCounts(round(total), _size(key), round(total), _size(response))


def ceaf_e(key: Clusters, response: Clusters, *, overlap: Overlap | None = None) -> CorefCounts:
    """CEAFe counts: (max Σφ4, |K|, max Σφ4, |R|), φ4(k, r) = 2·φ3(k, r) / (|k| + |r|), over non-empty clusters."""
    total = _alignment(_given(key, response, overlap), lambda common, k, r: 2 * common / (k + r))
    return CorefCounts(total, _count(key), total, _count(response))


def blanc(key: Clusters, response: Clusters, *, overlap: Overlap | None = None) -> BlancCounts:
    """BLANC link counts as sets of mention pairs.

    As v8.01 builds them, a mention repeated within a cluster links to itself
    and one repeated across clusters makes a self non-coreference link; without
    repeats the counts come from cluster overlaps instead of enumerating pairs.
    """
    overlap = _given(key, response, overlap)
    if overlap.repeats:
        return _blanc_by_pairs(key, response)
    coref_key, coref_response = _pairs_within(key), _pairs_within(response)
    key_mentions, response_mentions = _size(key), _size(response)
    found, pairs = overlap.response_sums
    coref_common, common_mentions = sum(pairs), sum(found)
    within_response = sum(n * (n - 1) // 2 for n in found)
    within_key = sum(n * (n - 1) // 2 for n in overlap.key_sums[0])  # each mention in one response cluster
    noncoref_common = common_mentions * (common_mentions - 1) // 2 - within_key - within_response + coref_common
    return BlancCounts(
        coref_common,
        coref_key,
        coref_response,
        noncoref_common,
        key_mentions * (key_mentions - 1) // 2 - coref_key,
        response_mentions * (response_mentions - 1) // 2 - coref_response,
    )


def lea(key: Clusters, response: Clusters, *, overlap: Overlap | None = None) -> CorefCounts:
    """LEA counts: recall from the key's entities resolved in the response, precision the other way round.

    For each non-empty entity e: importance |e|, links(e) = |e|(|e|−1)/2, or 1
    for a singleton; resolved(e) = the pairs of e (by position, so a repeat
    links to itself) whose mentions lie in the same (last) cluster of the
    other side, or for a singleton 1 when its mention is in a cluster of size
    1 there; numerator += resolved(e) / links(e) · |e|, denominator += |e|.
    """
    overlap = _given(key, response, overlap)
    recall_num, recall_den = _lea_side(key, response, overlap.response_where, overlap.key_sums[1])
    precision_num, precision_den = _lea_side(response, key, overlap.key_where, overlap.response_sums[1])
    return CorefCounts(recall_num, recall_den, precision_num, precision_den)


def _lea_side(
    entities: Clusters, others: Clusters, where: dict[Hashable, int], pairs_of: list[int]
) -> tuple[float, int]:
    """``where``: the other side's :func:`_last_cluster`; ``pairs_of``: for each entity, its pairs of mentions
    that one cluster of the other side holds (per ``where``)."""
    score, importance = 0.0, 0
    for entity, pairs in zip(entities, pairs_of, strict=True):
        size = len(entity)
        if size == 0:
            continue
        if size == 1:
            index = where.get(entity[0])
            resolved, links = int(index is not None and len(others[index]) == 1), 1.0
        else:
            resolved, links = pairs, size * (size - 1) / 2
        score += resolved / links * size
        importance += size
    return score, importance


# ---------------------------------------------------------------- preparing clusterings

Prepared = tuple[list[tuple[Hashable, ...]], list[tuple[Hashable, ...]], int, int]
"""``(key, response, removed, kept)``: the clusterings, the repeats removed and the repeats left in."""


def without_repeats(key: Clusters, response: Clusters) -> Prepared:
    """Every repeat of a mention on its side is removed, the first occurrence kept; emptied clusters go."""
    key_clusters, key_removed = _first_occurrences(key)
    response_clusters, response_removed = _first_occurrences(response)
    return key_clusters, response_clusters, key_removed + response_removed, 0


def without_response_repeats_of_key_mentions(key: Clusters, response: Clusters) -> Prepared:
    """The reference scorer's rule: only a response mention that is also a key mention loses its repeats.

    Walking the response clusters and their mentions in order, the first
    occurrence of a key mention is kept and later ones removed; emptied
    clusters go. Repeats in the key, and repeats of response mentions absent
    from the key, stay and are counted as often as they occur.
    """
    if len(set(itertools.chain.from_iterable(response))) == _size(response):  # no repeat to remove
        clusters = [tuple(cluster) for cluster in response if cluster]
        return [tuple(c) for c in key if c], clusters, 0, _repeats(key)
    return _response_repeats_walked(key, response)


def _response_repeats_walked(key: Clusters, response: Clusters) -> Prepared:
    """:func:`without_response_repeats_of_key_mentions`, walking every mention."""
    key_mentions = {m for cluster in key for m in cluster}
    matched: set[Hashable] = set()
    clusters, removed = [], 0
    for cluster in response:
        kept = []
        for mention in cluster:
            if mention in matched:
                removed += 1
                continue
            if mention in key_mentions:
                matched.add(mention)
            kept.append(mention)
        if kept:
            clusters.append(tuple(kept))
    kept_repeats = _repeats(key) + _repeats(clusters)
    return [tuple(c) for c in key if c], clusters, removed, kept_repeats


def with_repeats(key: Clusters, response: Clusters) -> Prepared:
    """Nothing removed: every occurrence of a mention counts."""
    return [tuple(c) for c in key], [tuple(c) for c in response], 0, _repeats(key) + _repeats(response)


def without_singletons(clusters: Clusters) -> tuple[list[tuple[Hashable, ...]], int]:
    """The clusters of two or more mentions, and how many singletons were removed."""
    kept = [tuple(c) for c in clusters if len(c) > 1]
    return kept, len(clusters) - len(kept)


def without_nested(clusters: Clusters, bounds: Callable[[Hashable], tuple[int, int]]) -> tuple[list, int]:
    """Each cluster without the mentions that lie inside another, different mention of the same cluster.

    ``bounds`` gives a mention's first and last token. Returns the clusters
    (emptied ones cannot arise: the outermost mention stays) and the number of
    mentions removed.
    """
    result, removed = [], 0
    for cluster in clusters:
        spans = {m: bounds(m) for m in cluster}
        kept = tuple(
            m
            for m in cluster
            if not any(o[0] <= spans[m][0] and spans[m][1] <= o[1] and o != spans[m] for o in spans.values())
        )
        removed += len(cluster) - len(kept)
        result.append(kept)
    return result, removed


# ---------------------------------------------------------------- helpers


def _last_cluster(clusters: Clusters) -> dict[Hashable, int]:
    """CorefMention → index of the last cluster that contains it."""
    return {mention: index for index, cluster in enumerate(clusters) for mention in cluster}


def groups_in(cluster: Sequence[Hashable], where: dict[Hashable, int]) -> dict[int, int]:
    """How many of the cluster's mentions (by position) each other-side cluster holds, per ``where``."""
    counts: dict[int, int] = {}
    for mention in cluster:
        index = where.get(mention)
        if index is not None:
            counts[index] = counts.get(index, 0) + 1
    return counts


def _links(clusters: Clusters) -> int:
    return _size(clusters) - _count(clusters)


def _size(clusters: Clusters) -> int:
    return sum(map(len, clusters))


def _count(clusters: Clusters) -> int:
    return sum(map(bool, clusters))


def _pairs_within(clusters: Clusters) -> int:
    return sum(len(c) * (len(c) - 1) // 2 for c in clusters)


def _repeats(clusters: Clusters) -> int:
    return _size(clusters) - len({m for c in clusters for m in c})


def _first_occurrences(clusters: Clusters) -> tuple[list[tuple[Hashable, ...]], int]:
    seen: set[Hashable] = set()
    result, removed = [], 0
    for cluster in clusters:
        kept = []
        for mention in cluster:
            if mention in seen:
                removed += 1
            else:
                seen.add(mention)
                kept.append(mention)
        if kept:
            result.append(tuple(kept))
    return result, removed


def _alignment(overlap: Overlap, phi: Callable[[Any, Any, Any], Any]) -> float:
    """max Σ φ over one-to-one alignments of key to response clusters.

    ``phi(common, |k|, |r|)``, with ``common`` the occurrences of k's mentions
    in r, takes integers or arrays of them (one item per pair of clusters that
    share a mention). Clusters that share no mention score 0 with everything
    and are left out of the assignment. Each aligned pair adds ``1 − (1 − φ)``,
    in key order, as the reference scorer adds up its Munkres costs. A small
    matrix (:data:`~nlpbench.metrics.assignment.SMALL` cells) is built in plain
    Python, with the float operations of the arrays' path, for
    :func:`~nlpbench.metrics.assignment.maximum_assignment`.
    """
    if not overlap.shared:
        return 0.0
    rows = {i: n for n, i in enumerate(sorted({i for i, _ in overlap.shared}))}
    columns = {j: n for n, j in enumerate(sorted({j for _, j in overlap.shared}))}
    if len(rows) * len(columns) <= assignment.SMALL:
        scores = [[0.0] * len(columns) for _ in rows]
        for (i, j), common in overlap.shared.items():
            scores[rows[i]][columns[j]] = float(phi(common, len(overlap.key[i]), len(overlap.response[j])))
        chosen = [scores[i][j] for i, j in zip(*assignment.maximum_assignment(scores), strict=True)]
    else:
        chosen = _aligned_by_arrays(overlap, phi)
    total = 0.0
    for value in chosen:
        total += 1 - (1 - value)
    return total


def _aligned_by_arrays(overlap: Overlap, phi: Callable[[Any, Any, Any], Any]) -> list[float]:
    """The φ of the aligned pairs, in key order, from :attr:`Overlap.shared_table` and scipy's solver."""
    import numpy as np  # imported here: the command line starts faster for every other task

    table = overlap.shared_table
    assert table is not None  # the caller found shared mentions
    rows, columns, common, key_sizes, response_sizes = table
    scores = np.zeros((int(rows.max()) + 1, int(columns.max()) + 1))
    scores[rows, columns] = phi(common, key_sizes, response_sizes)
    assigned_rows, assigned_columns = assignment.solver()(scores, maximize=True)
    return scores[assigned_rows, assigned_columns].tolist()


def _blanc_by_pairs(key: Clusters, response: Clusters) -> BlancCounts:
    ids: dict[Hashable, int] = {}
    for cluster in itertools.chain(key, response):
        for mention in cluster:
            ids.setdefault(mention, len(ids))
    key_coref, key_noncoref = _link_sets(key, ids)
    response_coref, response_noncoref = _link_sets(response, ids)
    return BlancCounts(
        len(key_coref & response_coref),
        len(key_coref),
        len(response_coref),
        len(key_noncoref & response_noncoref),
        len(key_noncoref),
        len(response_noncoref),
    )


def _link_sets(clusters: Clusters, ids: dict[Hashable, int]) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    numbered = [[ids[m] for m in cluster] for cluster in clusters]
    coref = {(min(a, b), max(a, b)) for c in numbered for a, b in itertools.combinations(c, 2)}
    noncoref = {(min(a, b), max(a, b)) for c, d in itertools.combinations(numbered, 2) for a in c for b in d}
    return coref, noncoref
