"""Ontology similarity of two nodes as KGTK's similarity service computes it.

Both measures work on the superclasses of a node ``x``: ``x`` itself (when it
has any parent), its direct instance-of and subclass-of parents, and every
class reachable from those by subclass-of links. Information content comes
from instance counts: ``IC(c) = ln(N / count(c))`` with N the ontology's total.

``class_similarity`` (KGTK ``ClassSimilarity``): with ``F(q)`` the
superclasses of ``q`` plus ``q`` itself, each class ``c`` of ``F1 ∪ F2`` is
weighted ``m(c)·IC(c)``, ``m(c)`` the number of the two sets that hold it;
the weights are normalised to sum to 1 and the similarity is the weight of
``F1 ∩ F2``. For ``q1 ≠ q2`` that is ``2·IC(F1 ∩ F2) / (IC(F1) + IC(F2))``
with ``IC(S) = Σ IC(c)``, an IC-weighted Dice coefficient.

``jc_similarity`` (KGTK ``JiangConrathSimilarity``): the most specific common
subsumers ``mss`` are the common superclasses that are no direct parent of
another common superclass. The Jiang–Conrath distance through ``s`` is
``d(s) = max(0, IC(c1) + IC(c2) − 2·IC(s))``, normalised by the distance
through the top class, ``M = IC(c1) + IC(c2)``; the similarity is the largest
``max(0, 1 − d(s)/M)`` over ``mss``: 1 for ``c1 = c2``, 0 when ``mss`` is empty.

Both return None when a node is not in the ontology (KGTK's empty score).
"""

from __future__ import annotations

import math

from nlpbench.model.ontology import Ontology


def superclasses(ontology: Ontology, node: str) -> dict[str, tuple[str, ...]]:
    """Every superclass of ``node`` with its direct parents, as KGTK's ``get_node_supers_with_parents``.

    ``node`` itself is included, with its instance-of and subclass-of parents,
    when it has any; every other member comes with its subclass-of parents.
    """
    first = ontology.nodes[node].parents
    found: dict[str, tuple[str, ...]] = {node: first} if first else {}
    stack = list(reversed(first))
    while stack:
        current = stack.pop()
        if current in found or current == node:
            continue
        found[current] = ontology.nodes[current].subclass_of if current in ontology else ()
        stack.extend(reversed(found[current]))
    return found


def information_content(ontology: Ontology, node: str) -> float:
    """``ln(N / count(node))``."""
    return math.log(ontology.total / ontology.count(node))


def class_similarity(ontology: Ontology, q1: str, q2: str) -> float | None:
    """IC-weighted overlap of the two nodes' class sets; None when either node is unknown.

    The sums are exactly rounded (``math.fsum``): a sum over a set in iteration order would depend on the
    process's string hashing, and so could its last digit.
    """
    if q1 not in ontology or q2 not in ontology:
        return None
    features = [{q, *superclasses(ontology, q)} for q in dict.fromkeys((q1, q2))]
    weight: dict[str, float] = {}
    for feature_set in features:
        for c in feature_set:
            weight[c] = weight.get(c, 0.0) + information_content(ontology, c)
    total = math.fsum(weight.values())
    if total == 0:
        return 0.0
    shared = set.intersection(*features)
    return max(math.fsum(weight[c] for c in shared) / total, 0.0)


def most_specific_subsumers(ontology: Ontology, c1: str, c2: str) -> set[str]:
    """The common superclasses that are not a direct parent of another common superclass."""
    supers1, supers2 = superclasses(ontology, c1), superclasses(ontology, c2)
    common = supers1.keys() & supers2.keys()
    excluded = {p for supers in (supers1, supers2) for c in common for p in supers[c]}
    return common - excluded


def jc_similarity(ontology: Ontology, c1: str, c2: str) -> float | None:
    """Jiang–Conrath similarity through the best most specific common subsumer; None for unknown nodes."""
    if c1 not in ontology or c2 not in ontology:
        return None
    subsumers = most_specific_subsumers(ontology, c1, c2)
    if not subsumers:
        return 0.0
    if c1 == c2:
        return 1.0
    # computed in KGTK's order of operations, so that the values agree to the last bit
    log_p = [math.log(ontology.count(c) / ontology.total) for c in (c1, c2)]
    through_top = -(log_p[0] + log_p[1])
    if through_top <= 0:
        return 0.0
    best = 0.0
    for s in subsumers:
        distance = max(2 * math.log(ontology.count(s) / ontology.total) + through_top, 0.0)
        best = max(best, 1.0 - distance / through_top)
    return best
