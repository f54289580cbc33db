"""Coreference metrics as e2e-coref's ``metrics.py`` defines them (corefeval, trusted_ke).

kentonl/e2e-coref ``metrics.py`` (after Clark & Manning's deep-coref), copied
into PyPI ``coreference-eval`` (corefeval) 0.0.2, which trusted_ke used to
score the OMIn tools. Each metric is computed in two directions: precision
from the response clusters against the key's mention map, recall from the key
clusters against the response's. A mention map sends each mention to the
last cluster containing it; clusters are compared by their contents. Counts
are :class:`~nlpbench.metrics.coref.CorefCounts`, summed over documents.

How these differ from :mod:`nlpbench.metrics.coref` (the reference scorer):

- **B³** skips clusters of size 1 on the evaluated side, and counts no credit
  for mentions that fall in a cluster of size 1 on the other side: singletons
  are invisible in both numerator and denominator;
- **CEAFe** drops response clusters of size 1 before aligning; key clusters are
  all kept, so the recall denominator counts key singletons and the precision
  denominator does not count response singletons;
- **LEA** skips clusters of size 1 on the evaluated side: no singleton
  self-links;
- **MUC** is the same on clusterings without repeated mentions;
- a mention in two clusters of one side belongs to the last of them when the
  other side looks it up, but counts in both where its own side is evaluated.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from nlpbench.metrics.assignment import maximum_assignment
from nlpbench.metrics.coref import Clusters, CorefCounts, groups_in


def muc(key: Clusters, response: Clusters) -> CorefCounts:
    """MUC: per cluster c, denominator += |c| − 1 and numerator += |c| − (mentions of c absent from the
    other side) − (other-side clusters that c's mentions fall in).
    """
    recall_num, recall_den = _muc_side(key, _MentionMap(response))
    precision_num, precision_den = _muc_side(response, _MentionMap(key))
    return CorefCounts(recall_num, recall_den, precision_num, precision_den)


def b_cubed(key: Clusters, response: Clusters) -> CorefCounts:
    """B³ without singletons: per cluster c with |c| > 1, numerator += Σ n² / |c| over the other-side clusters
    of size > 1 that hold n of c's mentions; denominator += |c|.
    """
    recall_num, recall_den = _b_cubed_side(key, _MentionMap(response))
    precision_num, precision_den = _b_cubed_side(response, _MentionMap(key))
    return CorefCounts(recall_num, recall_den, precision_num, precision_den)


def ceaf_e(key: Clusters, response: Clusters) -> CorefCounts:
    """CEAFe with response singletons dropped: (max Σφ4, |K|, max Σφ4, |R without singletons|).

    φ4(k, r) = 2·(mentions of k found in r) / (|k| + |r|); the alignment is the
    one-to-one assignment of maximal total (:func:`~nlpbench.metrics.assignment.maximum_assignment`, scipy's
    for a large matrix), its scores summed in key order.
    """
    kept = [cluster for cluster in response if len(cluster) != 1]
    members = [set(r) for r in kept]
    scores = [
        [2 * sum(1 for m in k if m in shared) / (len(k) + len(r)) for r, shared in zip(kept, members, strict=True)]
        for k in key
    ]
    rows, columns = maximum_assignment(scores)
    similarity = float(sum(scores[i][j] for i, j in zip(rows, columns, strict=True)))
    return CorefCounts(similarity, len(key), similarity, len(kept))


def lea(key: Clusters, response: Clusters) -> CorefCounts:
    """LEA without singletons: per cluster c with |c| > 1, numerator += |c| · resolved(c) / (|c|(|c|−1)/2),
    denominator += |c|; resolved(c) = pairs of c's positions whose mentions map to one other-side cluster.
    """
    recall_num, recall_den = _lea_side(key, _MentionMap(response))
    precision_num, precision_den = _lea_side(response, _MentionMap(key))
    return CorefCounts(recall_num, recall_den, precision_num, precision_den)


class _MentionMap:
    """CorefMention → the last cluster that contains it, clusters identified by their contents, with their sizes."""

    def __init__(self, clusters: Clusters):
        ids: dict[tuple[Hashable, ...], int] = {}
        self.cluster: dict[Hashable, int] = {}
        self.size: list[int] = []
        for cluster in clusters:
            contents = tuple(cluster)
            if contents not in ids:
                ids[contents] = len(ids)
                self.size.append(len(contents))
            for mention in contents:
                self.cluster[mention] = ids[contents]

    def groups(self, cluster: Sequence[Hashable]) -> dict[int, int]:
        """How many of the cluster's mentions (by position) map to each other-side cluster."""
        return groups_in(cluster, self.cluster)


def _muc_side(clusters: Clusters, other: _MentionMap) -> tuple[int, int]:
    correct = links = 0
    for cluster in clusters:
        links += len(cluster) - 1
        groups = other.groups(cluster)
        correct += sum(groups.values()) - len(groups)
    return correct, links


def _b_cubed_side(clusters: Clusters, other: _MentionMap) -> tuple[float, int]:
    correct, total = 0.0, 0
    for cluster in clusters:
        if len(cluster) == 1:
            continue
        groups = other.groups(cluster)
        shared = sum(n * n for index, n in groups.items() if other.size[index] != 1)
        correct += shared / float(len(cluster))
        total += len(cluster)
    return correct, total


def _lea_side(clusters: Clusters, other: _MentionMap) -> tuple[float, int]:
    score, importance = 0.0, 0
    for cluster in clusters:
        size = len(cluster)
        if size == 1:
            continue
        resolved = sum(n * (n - 1) // 2 for n in other.groups(cluster).values())
        score += size * (resolved / (size * (size - 1) / 2.0))
        importance += size
    return score, importance
