"""Small documents to read and write in format tests."""

import json

from nlpbench.model import Annotation, Document, Span

TEXT = "Seen 12/26/2070 by Dr. Marcus Lee at St. Vincent Clinic, Seattle WA 98101.\nCall 206-555-0199."


def note(doc_id: str = "n1") -> Document:
    """A note with one annotation of each NLP Sandbox type and two i2b2-only ones."""

    def at(piece: str, label: str, **attributes) -> Annotation:
        start = TEXT.index(piece)
        return Annotation(doc_id, Span.of(start, len(piece)), label, piece, attributes)

    doc = Document(doc_id, TEXT)
    doc.annotations = [
        at("12/26/2070", "date"),
        at("Marcus Lee", "person_name", personType="doctor"),
        at("St. Vincent Clinic", "location", locationType="hospital"),
        at("Seattle", "location", locationType="city"),
        at("WA", "location", locationType="state"),
        at("98101", "location", locationType="zip"),
        at("206-555-0199", "contact", contactType="phone"),
    ]
    return doc


def spans_and_types(doc: Document) -> list[tuple]:
    """What a round trip must keep: every span, label and subtype."""
    keep = ("personType", "locationType", "idType", "contactType", "dateFormat")
    return sorted(
        (a.span.parts, a.label, tuple((k, a.attributes[k]) for k in keep if k in a.attributes)) for a in doc.annotations
    )


def repeats_a_key(text: str | bytes) -> bool:
    """Whether an object in the JSON ``text`` repeats a key, as ``json.loads`` sees its members."""

    def pairs(items):
        if len({key for key, _ in items}) < len(items):
            raise KeyError
        return dict(items)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except KeyError:
        return True
    return False
