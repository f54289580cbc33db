"""The one data model every reader produces and every metric consumes."""

from nlpbench.model.align import pair_documents
from nlpbench.model.annotation import Annotation, Link, Relation
from nlpbench.model.coding import CodeReference, RankedCodes
from nlpbench.model.columns import MISSING, SpanColumns, SpanRow
from nlpbench.model.coref import Cluster, CorefDocument, CorefMention, mention_problem, span_of
from nlpbench.model.document import Document
from nlpbench.model.mention import GoldEntity, LinkedMention, Mention
from nlpbench.model.ontology import Ontology, OntologyNode
from nlpbench.model.phi import HIPAA_LOCATION, PHI_TYPES, PhiType, phi_type
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
