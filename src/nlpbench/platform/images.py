"""Image references a team may give: ``REGISTRY/NAME@sha256:…``, pulled only from registries the organisers name.

A team's image is pinned by its digest (a tag can change under a submission)
and comes from a registry of the queue's ``image_registries``: ``host[:port]``
(HTTPS) or ``http://host[:port]`` (a registry of the organisers' own network,
without TLS). Anything else is refused at submit and again by the worker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: ``registry/name@sha256:hex``: a registry host (a dot, a port or ``localhost`` tells it from a name), a
#: repository of lowercase parts, a SHA-256 digest.
REFERENCE = re.compile(
    r"(?P<registry>(?:localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*:\d{1,5}))"
    r"/(?P<name>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
    r"@(?P<digest>sha256:[0-9a-f]{64})"
)


@dataclass(frozen=True)
class Reference:
    """A pinned image: where it is, what it is called, and its digest."""

    registry: str
    name: str
    digest: str

    def __str__(self) -> str:
        return f"{self.registry}/{self.name}@{self.digest}"


def reference(text: str) -> Reference | None:
    """``text`` as a pinned image reference, or None when it is not one."""
    found = REFERENCE.fullmatch(text)
    return Reference(found["registry"].lower(), found["name"], found["digest"]) if found else None


def registries(entries: list[str]) -> dict[str, bool]:
    """The queue's registries: ``host[:port]`` → whether it is reached without TLS (``http://`` entries)."""
    named: dict[str, bool] = {}
    for entry in entries:
        plain = entry.startswith("http://")
        named[entry.removeprefix("http://").removeprefix("https://").rstrip("/").lower()] = plain
    return named


def registry_entry(text: str) -> str:
    """An organiser's registry as stored: ``host[:port]`` or ``http://host[:port]``; InputError otherwise."""
    from nlpbench.errors import InputError

    plain = text.startswith("http://")
    host = text.removeprefix("http://").removeprefix("https://").rstrip("/").lower()
    if not re.fullmatch(r"[a-z0-9.-]+(?::\d{1,5})?", host) or not host.strip(".-"):
        raise InputError(f"{text[:80]!r} is not a registry (host or host:port, http:// for one without TLS)")
    return f"http://{host}" if plain else host
