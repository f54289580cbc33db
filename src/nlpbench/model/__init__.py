"""The one data model every reader produces and every metric consumes."""

from nlpbench.model.align import pair_documents
from nlpbench.model.document import Annotation, Document, Link, Relation
from nlpbench.model.phi import HIPAA_LOCATION, PHI_TYPES, PhiType, phi_type
from nlpbench.model.span import Span
from nlpbench.model.timelines import BEGINS_ON, CONTAINS, ENDS_ON, TIMELINE_LABELS, Timeline, TimelineTuple

__all__ = [
    "BEGINS_ON",
    "CONTAINS",
    "ENDS_ON",
    "HIPAA_LOCATION",
    "PHI_TYPES",
    "TIMELINE_LABELS",
    "Annotation",
    "Document",
    "Link",
    "PhiType",
    "Relation",
    "Span",
    "Timeline",
    "TimelineTuple",
    "pair_documents",
    "phi_type",
]
