"""A small class hierarchy with instance counts: what ontology similarity needs, nothing more.

Each node lists its direct ``instance_of`` (Wikidata P31) and ``subclass_of``
(P279) parents and, for a class, its transitive instance count: how many
entities are instances of it or of any of its subclasses. ``total`` is the
count of the top class (N; in Wikidata the count of Q35120 "entity"). A node
without a count counts 1, as KGTK treats a plain instance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class OntologyNode:
    instance_of: tuple[str, ...] = ()
    subclass_of: tuple[str, ...] = ()
    count: int | None = None
    label: str | None = None

    @property
    def parents(self) -> tuple[str, ...]:
        """The direct parents by either relation, instance-of first."""
        return self.instance_of + tuple(p for p in self.subclass_of if p not in self.instance_of)


@dataclass(frozen=True)
class Ontology:
    total: int
    nodes: Mapping[str, OntologyNode] = field(default_factory=dict)

    def __contains__(self, node: object) -> bool:
        return node in self.nodes

    def count(self, node: str) -> int:
        """The transitive instance count of ``node``; 1 when none is recorded."""
        known = self.nodes.get(node)
        return known.count if known is not None and known.count is not None else 1
