"""The one data model every reader produces and every metric consumes.

Each name loads its module on first use (PEP 562), so that a command loads the parts of the model its
task reads and no other: ``score sandbox`` no coreference clusters, ontologies, triples or token documents.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nlpbench.model.align import pair_documents
    from nlpbench.model.annotation import Annotation, Link, Relation
    from nlpbench.model.coding import CodeReference, RankedCodes
    from nlpbench.model.columns import MISSING, SpanColumns, SpanRow
    from nlpbench.model.coref import Cluster, CorefDocument, CorefMention, mention_problem, span_of
    from nlpbench.model.document import Document
    from nlpbench.model.mention import GoldEntity, LinkedMention, Mention
    from nlpbench.model.ontology import Ontology, OntologyNode
    from nlpbench.model.phi import HIPAA_LOCATION, PHI_LABELS, PHI_TYPES, PhiType, phi_type
    from nlpbench.model.span import Span
    from nlpbench.model.timelines import BEGINS_ON, CONTAINS, ENDS_ON, TIMELINE_LABELS, Timeline, TimelineTuple
    from nlpbench.model.tokens import EntityColumns, TokenDocument, tokens_document
    from nlpbench.model.triple import Argument, Triple, UnknownArgument, triples_of

__all__ = [
    "BEGINS_ON",
    "CONTAINS",
    "ENDS_ON",
    "HIPAA_LOCATION",
    "MISSING",
    "PHI_LABELS",
    "PHI_TYPES",
    "TIMELINE_LABELS",
    "Annotation",
    "Argument",
    "Cluster",
    "CodeReference",
    "CorefDocument",
    "CorefMention",
    "Document",
    "EntityColumns",
    "GoldEntity",
    "Link",
    "LinkedMention",
    "Mention",
    "Ontology",
    "OntologyNode",
    "PhiType",
    "RankedCodes",
    "Relation",
    "Span",
    "SpanColumns",
    "SpanRow",
    "Timeline",
    "TimelineTuple",
    "TokenDocument",
    "Triple",
    "UnknownArgument",
    "mention_problem",
    "pair_documents",
    "phi_type",
    "span_of",
    "tokens_document",
    "triples_of",
]

#: The module of :mod:`nlpbench.model` that defines each name.
_MODULES = {
    name: module
    for module, names in {
        "align": ("pair_documents",),
        "annotation": ("Annotation", "Link", "Relation"),
        "coding": ("CodeReference", "RankedCodes"),
        "columns": ("MISSING", "SpanColumns", "SpanRow"),
        "coref": ("Cluster", "CorefDocument", "CorefMention", "mention_problem", "span_of"),
        "document": ("Document",),
        "mention": ("GoldEntity", "LinkedMention", "Mention"),
        "ontology": ("Ontology", "OntologyNode"),
        "phi": ("HIPAA_LOCATION", "PHI_LABELS", "PHI_TYPES", "PhiType", "phi_type"),
        "span": ("Span",),
        "timelines": ("BEGINS_ON", "CONTAINS", "ENDS_ON", "TIMELINE_LABELS", "Timeline", "TimelineTuple"),
        "tokens": ("EntityColumns", "TokenDocument", "tokens_document"),
        "triple": ("Argument", "Triple", "UnknownArgument", "triples_of"),
    }.items()
    for name in names
}


def __getattr__(name: str) -> Any:
    """Load a name of the model on first use (PEP 562); it is then an attribute of the package."""
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
