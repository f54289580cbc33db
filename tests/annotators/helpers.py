"""Run a registered annotator on a text and list what it found."""

from nlpbench.annotators import REGISTRY
from nlpbench.model import Document, phi_type


def found(annotator: str, text: str) -> list[tuple[str, str | None]]:
    """(covered text, subtype) of each annotation, in text order."""
    annotations = REGISTRY.get(annotator)().annotate(Document("note-1", text))
    return [(a.text, a.attributes.get(phi_type(a.label).type_attribute)) for a in annotations]


def texts(annotator: str, text: str) -> list[str]:
    return [covered for covered, _ in found(annotator, text)]
