"""What every profile has, and the one registry that holds them all."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, fields
from typing import TypeVar

from nlpbench.registry import Registry, UnknownName

_Value = TypeVar("_Value")


def quirk(default: _Value, doc: str) -> _Value:
    """A profile field: its value, and the sentence saying which scorer does it and why it matters.

    Typed as its value, as :func:`dataclasses.field` is to type checkers, so a field reads as what it holds.
    """
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class Profile:
    """A named way of scoring one task: ``standard`` or a parity profile."""

    task: str
    name: str
    summary: str
    reference: str = quirk("", "The official scorer and version this profile reproduces.")


REGISTRY: Registry[Profile] = Registry("profile")
#: The profiles each task's module (``nlpbench.profiles.<task>``) registers, by task: what :func:`names`
#: lists without importing the module, which imports that task's metrics (numpy, scipy, …). A test
#: checks that each module registers exactly these.
CATALOGUE: dict[str, tuple[str, ...]] = {
    "spans": ("nlpsandbox", "nlpsandbox-legacy", "standard"),
    "ner": ("nervaluate", "standard", "trusted-ke"),
    "coref": ("conll2012", "e2e", "standard"),
    "linking": ("standard", "trusted-ke"),
    "relations": ("rebel", "standard"),
    "codiesp": ("codiesp2020", "standard"),
    "timelines": ("chemotimelines2024", "standard"),
    "i2b2": ("i2b2-2014", "standard"),
    "deid": ("standard",),
}


_Kind = TypeVar("_Kind", bound=Profile)


def register(profile: _Kind) -> _Kind:
    """Register ``profile`` under ``task/name``; it is returned, typed as what it is."""
    REGISTRY.register(f"{profile.task}/{profile.name}", profile)
    return profile


def get(task: str, name: str) -> Profile:
    """The profile ``name`` of ``task``; ``UnknownName`` lists that task's profiles."""
    _load(task)
    key = f"{task}/{name}"
    if key not in REGISTRY:
        raise UnknownName(f"unknown profile {name!r} for {task}; known: {', '.join(names(task))}")
    return REGISTRY.get(key)


def names(task: str) -> list[str]:
    """The profile names of ``task``, sorted: its module's (:data:`CATALOGUE`, listed without importing
    the module) and any registered from elsewhere (a task added as one module registers its own)."""
    registered = [key.split("/", 1)[1] for key in REGISTRY if key.startswith(f"{task}/")]
    return sorted({*CATALOGUE.get(task, ()), *registered})


def every_name() -> list[str]:
    """Every profile name of every task, sorted, each once (``standard`` is every task's), without
    importing the profile modules."""
    families = {*CATALOGUE, *(key.split("/", 1)[0] for key in REGISTRY)}
    return sorted({name for family in families for name in names(family)})


def describe(profile: Profile) -> list[tuple[str, str, str]]:
    """``(field, value, sentence)`` for each documented field of a profile."""
    return [
        (f.name, _shown(getattr(profile, f.name)), f.metadata["doc"]) for f in fields(profile) if "doc" in f.metadata
    ]


def _shown(value: object) -> str:
    """A field value as a person reads it: functions by name, sets sorted."""
    if callable(value):
        return getattr(value, "__name__", repr(value))
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(map(str, value))) + "}"
    return repr(value)


def _load(task: str) -> None:
    """Import the profile module of ``task`` (each task's profiles live in the module of its name,
    ``nlpbench.profiles.<task>``) so that it registers them; an unknown task imports nothing."""
    if task in CATALOGUE:
        importlib.import_module(f"nlpbench.profiles.{task}")
