"""Clinical coding: the codes assigned to a document, ranked or justified by text.

CodiEsp-D and -P give each document a list of codes, best first
(:class:`RankedCodes`); CodiEsp-X gives each code the text that justifies it
(:class:`CodeReference`). Codes are kept as written: lower-casing, removing
repeats and checking them against a valid-code list are scoring rules, applied
by the task, so that what they remove can be counted and reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from nlpbench.model.span import Span

#: The cutoffs of MAP@k, P@k and R@k that CodiEsp's standard profile reports unless told otherwise (kept
#: with the model so that ``nlpbench score`` shows them without importing the CodiEsp metrics).
DEFAULT_K = (10, 30)


@dataclass(frozen=True, slots=True)
class RankedCodes:
    """The codes of one document in rank order: ``codes[0]`` is rank 1."""

    doc_id: str
    codes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CodeReference:
    """A code of one document and the text reference that justifies it.

    ``fragments`` are the ``(start, end)`` character offsets of the reference
    in the order the file lists them (gold references may list the pieces of a
    discontinuous reference out of text order); a predicted reference has one
    fragment, kept as written even when it ends before it starts or starts
    before the text (the official scorer's arithmetic is defined on such spans;
    readers decide what they accept). ``label`` is the file's ``DIAGNOSTICO`` / ``PROCEDIMIENTO``;
    ``text`` the gold reference text, when the file gives it.
    """

    doc_id: str
    code: str
    fragments: tuple[tuple[int, int], ...]
    label: str = ""
    text: str | None = None

    def __post_init__(self) -> None:
        if not self.fragments:
            raise ValueError("a code reference needs at least one (start, end) fragment")
        for start, end in self.fragments:
            if type(start) is not int or type(end) is not int:  # not bool either
                raise ValueError(f"offsets {start!r} {end!r} are not integers")

    @property
    def listed_bounds(self) -> tuple[int, int]:
        """The first listed fragment's start and the last listed fragment's end (may be inverted)."""
        return self.fragments[0][0], self.fragments[-1][1]

    @property
    def covering_bounds(self) -> tuple[int, int]:
        """The smallest start and the largest end: the stretch of text that holds every fragment."""
        return min(start for start, _ in self.fragments), max(end for _, end in self.fragments)

    @property
    def span(self) -> Span:
        """The reference as a :class:`Span`: its fragments in text order (``ValueError`` if one is inverted)."""
        return Span.from_fragments(list(self.fragments))
