"""The one data model every reader produces and every metric consumes."""

from nlpbench.model.align import pair_documents
from nlpbench.model.coding import CodeReference, RankedCodes
from nlpbench.model.document import Annotation, Document, Link, Relation
from nlpbench.model.phi import HIPAA_LOCATION, PHI_TYPES, PhiType, phi_type
from nlpbench.model.span import Span

__all__ = [
    "HIPAA_LOCATION",
    "PHI_TYPES",
    "Annotation",
    "CodeReference",
    "Document",
    "Link",
    "PhiType",
    "RankedCodes",
    "Relation",
    "Span",
    "pair_documents",
    "phi_type",
]
