"""The baseline annotators: fast rules and word lists, one per NLP Sandbox type, and all five together.

Every baseline runs all five finders and resolves their overlaps across types
(:func:`~nlpbench.annotators.rules.resolve`) before keeping its own types, so
that the date annotator does not report a date inside a phone number that the
contact finder recognises, and ``date`` gives exactly the dates that ``phi``
gives.
"""

from __future__ import annotations

from collections.abc import Callable

from nlpbench.annotators import REGISTRY, Annotator, ToolInfo, contacts, dates, ids, locations, names
from nlpbench.annotators.rules import Candidate, resolve, to_annotations
from nlpbench.model import Annotation, Document
from nlpbench.version import __version__

Finder = Callable[[str], list[Candidate]]
FINDERS: tuple[Finder, ...] = (dates.find, names.find, locations.find, ids.find, contacts.find)


class RuleAnnotator(Annotator):
    """Finds the PHI of ``types`` with the rule finders of this package."""

    def __init__(self, info: ToolInfo, types: tuple[str, ...]):
        self.info = info
        self.types = types

    def annotate(self, note: Document) -> list[Annotation]:
        text = note.text or ""
        candidates = [candidate for find in FINDERS for candidate in find(text)]
        return to_annotations(note.id, text, resolve(candidates), self.types)


def _baseline(name: str, types: tuple[str, ...], what: str) -> Callable[[], Annotator]:
    info = ToolInfo(
        name=f"nlpbench-{name.replace('_', '-')}-annotator",
        version=__version__,
        description=f"nlpbench's rule- and lexicon-based baseline annotator of {what} in clinical notes.",
        license="apache-2.0",
    )
    return REGISTRY.register(name, lambda: RuleAnnotator(info, types))


_baseline("date", ("date",), "dates")
_baseline("person_name", ("person_name",), "person names")
_baseline("location", ("location",), "locations")
_baseline("id", ("id",), "identifiers")
_baseline("contact", ("contact",), "contact details")
_baseline("phi", ("date", "person_name", "location", "id", "contact"), "all five PHI types")
