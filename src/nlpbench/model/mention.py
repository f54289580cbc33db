"""What is known about an entity when a format gives its words but not its offsets.

Some corpora list mentions by their surface string only: the OMIn gold
standard and the tool outputs scored with it, free-text relation triples, the
entity-linking rows of trusted_ke. A :class:`Mention` is such a string with
its type; a :class:`LinkedMention` adds the knowledge-base identifier a system
chose; a :class:`GoldEntity` gives every acceptable (mention, identifier) pair
of one gold entity, most specific first.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mention:
    """A typed surface string of one document; ``label`` is None when the corpus gives no type."""

    doc_id: str
    text: str
    label: str | None = None


@dataclass(frozen=True, slots=True)
class LinkedMention:
    """A system's link: the mention string and the identifier (a Wikidata QID) it was linked to."""

    doc_id: str
    mention: str
    identifier: str


@dataclass(frozen=True, slots=True)
class GoldEntity:
    """One gold entity and its acceptable links, in priority order.

    ``choices`` holds the (mention, identifier) pairs of the primary,
    secondary and tertiary span; either part may be None (no such span, or
    a span without an identifier). The later spans are sub-spans of the
    earlier ones and their identifiers are more general.
    """

    doc_id: str
    choices: tuple[tuple[str | None, str | None], ...]

    @property
    def primary(self) -> tuple[str | None, str | None]:
        return self.choices[0] if self.choices else (None, None)
