"""Named registries: formats, profiles, tasks and annotators are looked up by name.

The command line and the services list what a registry holds instead of
repeating the names, so adding a format or a profile is one decorator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from nlpbench.errors import Kind, NlpbenchError

T = TypeVar("T")


class UnknownName(NlpbenchError, LookupError):
    """A name that is not registered; the message lists the names that are."""

    kind = Kind.input


class Registry(Generic[T]):
    """A mapping from names to objects of one kind, filled by :meth:`register`."""

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> T:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item
        return item

    def decorator(self, name: str) -> Callable[[T], T]:
        """``@registry.decorator("name")`` registers the decorated object."""
        return lambda item: self.register(name, item)

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise UnknownName(f"unknown {self.kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
