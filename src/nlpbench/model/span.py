"""Character spans, possibly discontinuous.

Offsets are Python ``str`` indices into the document text: 0-based, end
exclusive. A discontinuous span (brat's ``0 5;9 14``) keeps its fragments; its
``start`` and ``end`` are those of the first and last fragment.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """``[start, end)`` plus, when discontinuous, every ``(start, end)`` fragment in order."""

    start: int
    end: int
    fragments: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        start, end = self.start, self.end
        if type(start) is int and type(end) is int and 0 <= start <= end and not self.fragments:
            return  # the common case, checked in one test: spans are made by the million
        if type(start) is not int:
            raise ValueError(f"start {start!r} is not an integer")
        if type(end) is not int:
            raise ValueError(f"end {end!r} is not an integer")
        if start < 0:
            raise ValueError(f"negative offset {start}")
        if end < start:
            raise ValueError(f"end {end} before start {start}")
        self._check_fragments()

    def _check_fragments(self) -> None:
        if len(self.fragments) < 2:
            raise ValueError("a discontinuous span needs at least two fragments")
        if self.fragments[0][0] != self.start or self.fragments[-1][1] != self.end:
            raise ValueError("fragments do not begin at start and finish at end")
        previous_end = -1
        for start, end in self.fragments:
            if end < start or start < previous_end:
                raise ValueError(f"fragments {self.fragments} are inverted or overlap")
            previous_end = end

    @classmethod
    def of(cls, start: int, length: int) -> Span:
        """The contiguous span of ``length`` characters from ``start``."""
        return cls(start, start + length)

    @classmethod
    def from_fragments(cls, fragments: list[tuple[int, int]]) -> Span:
        """One span from its fragments; a single fragment gives a contiguous span."""
        ordered = tuple(sorted(fragments))
        if len(ordered) == 1:
            return cls(*ordered[0])
        return cls(ordered[0][0], ordered[-1][1], ordered)

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def parts(self) -> tuple[tuple[int, int], ...]:
        """The fragments, or the one ``(start, end)`` pair of a contiguous span."""
        return self.fragments or ((self.start, self.end),)

    @property
    def discontinuous(self) -> bool:
        return bool(self.fragments)

    def covered_text(self, text: str) -> str:
        """The text the span covers; fragments are joined with one space, as brat does."""
        return " ".join(text[start:end] for start, end in self.parts)
