"""A local ontology for similarity: one JSON object, read whole.

::

    {"total": 41575722,
     "nodes": {
       "Q35120":    {"label": "entity", "count": 41575722},
       "Q28640":    {"label": "profession", "subclass_of": ["Q35120"], "count": 1423733},
       "Q17126809": {"label": "rescuer", "subclass_of": ["Q35120"], "count": 783},
       "Q107711":   {"label": "firefighter", "subclass_of": ["Q17126809", "Q28640"], "count": 501},
       "Q677":      {"label": "iron", "instance_of": ["Q11344"]}}}

``total`` is N, the instance count of the top class (Wikidata's Q35120
"entity", the count KGTK normalises with). Each node gives its direct
``instance_of`` (P31) and ``subclass_of`` (P279) parents and, for a class,
``count``: its transitive instance count (instances of it or of any of its
subclasses); a node without a count counts 1. ``label`` is for people only.
Every parent must itself be a node. Extract such a file from a KGTK
edge file with P31/P279 edges and KGTK's class-count file.
"""

from __future__ import annotations

from nlpbench import files
from nlpbench.errors import InputError, excerpt
from nlpbench.files import Source
from nlpbench.formats import jsonstream
from nlpbench.model import Ontology, OntologyNode


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def read(path: Source) -> Ontology:
    path = files.source(path)
    data = jsonstream.decode(files.read_bytes(path), path)
    if not isinstance(data, dict) or not _positive(data.get("total")) or not isinstance(data.get("nodes"), dict):
        raise InputError("an ontology is an object with a positive integer total and an object of nodes", path)
    nodes = {}
    for name, node in data["nodes"].items():
        where = f"node {name}"
        if not isinstance(node, dict):
            raise InputError("a node is an object", path, where)
        parents = {}
        for key in ("instance_of", "subclass_of"):
            value = node.get(key, [])
            if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
                raise InputError(f"{key} must be a list of node ids", path, where)
            parents[key] = tuple(dict.fromkeys(value))
        count = node.get("count")
        if count is not None and not _positive(count):
            raise InputError(f"count {excerpt(count)} is not a positive integer", path, where)
        label = node.get("label")
        nodes[name] = OntologyNode(parents["instance_of"], parents["subclass_of"], count, label)
    for name, node in nodes.items():
        unknown = [p for p in node.parents if p not in nodes]
        if unknown:
            raise InputError(f"parent {unknown[0]} is not a node of the ontology", path, f"node {name}")
    return Ontology(data["total"], nodes)
