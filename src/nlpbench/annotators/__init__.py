"""Annotators: functions from a note to PHI annotations, servable as NLP Sandbox tools.

An :class:`Annotator` reads one :class:`~nlpbench.model.Document` (its text)
and returns :class:`~nlpbench.model.Annotation` objects labelled with NLP
Sandbox types (``date``, ``person_name``, ``location``, ``id``, ``contact``)
and their subtype attributes (``dateFormat``, ``locationType``, …), with a
confidence from 0 to 100. :data:`REGISTRY` maps a name to a factory, so that
optional adapters import their third-party package only when asked for.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from nlpbench.errors import Kind, NlpbenchError
from nlpbench.model import Annotation, Document
from nlpbench.registry import Registry
from nlpbench.toolapi.account import Account


@dataclass(frozen=True)
class ToolInfo:
    """What an NLP Sandbox tool says about itself (``GET /api/v1/tool``)."""

    name: str  # lower-case words joined by hyphens, 3 to 60 characters
    version: str  # SemVer
    description: str  # one sentence, at most 280 characters
    license: str  # an NLP Sandbox license identifier, e.g. "apache-2.0"
    repository: str = "github:nlpbench/nlpbench"
    author: str = "The nlpbench team"
    author_email: str = "team@nlpbench.invalid"
    url: str = "https://github.com/nlpbench/nlpbench"


class Annotator(ABC):
    """Finds PHI in one note. Subclasses set ``info`` and ``types`` and implement ``annotate``."""

    info: ToolInfo
    #: The annotation types this annotator produces, in NLP Sandbox names.
    types: tuple[str, ...]

    @abstractmethod
    def annotate(self, note: Document) -> list[Annotation]:
        """The annotations of ``note.text``, in text order; each ``doc_id`` is ``note.id``."""

    def annotate_accounted(self, note: Document) -> tuple[list[Annotation], Mapping[str, Account] | None]:
        """:meth:`annotate`, and an :class:`~nlpbench.toolapi.account.Account` of the note per type, if the
        annotator keeps one (an LLM endpoint's grounding counts, tokens and latency); None by default."""
        return self.annotate(note), None


class UpstreamError(NlpbenchError):
    """The service an annotator relies on (an LLM endpoint) failed or answered what cannot be used.

    A tool answers it as a 502 problem (``retry_after`` set: 503 with ``Retry-After``). The message names the
    model, statuses and sizes only, never a note or what the service answered.
    """

    kind = Kind.tool

    def __init__(self, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        if retry_after is not None:
            self.kind = Kind.unavailable

    def problem_headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}


REGISTRY: Registry[Callable[[], Annotator]] = Registry("annotator")


def load_all() -> list[str]:
    """Register the adapters whose third-party packages are installed; the names of all annotators."""
    from nlpbench.annotators import adapters  # noqa: F401 - registers on import

    return REGISTRY.names()


def installed_adapters() -> list[str]:
    """The adapters to third-party tools that can run here, in registry order."""
    from nlpbench.annotators.adapters import ADAPTERS

    load_all()
    return [name for name in ADAPTERS if name in REGISTRY]


# The baseline annotators register themselves; their word lists load on first use.
from nlpbench.annotators import baseline  # noqa: E402, F401
