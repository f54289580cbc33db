"""Scoring tasks: each reads its inputs, scores them under a profile and returns a Report.

The command line, the services and the runner all score through these
functions; :data:`REGISTRY` lists the tasks by the name ``nlpbench score``
uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nlpbench.registry import Registry
from nlpbench.report import Report


@dataclass(frozen=True)
class Task:
    name: str
    summary: str
    profiles: str  # the profile family, for nlpbench.profiles.names()
    score: Callable[..., Report]


REGISTRY: Registry[Task] = Registry("task")


def register(name: str, summary: str, profiles: str):
    """Decorator: register a scoring function as the task ``name``."""

    def decorate(score: Callable[..., Report]) -> Callable[..., Report]:
        REGISTRY.register(name, Task(name, summary, profiles, score))
        return score

    return decorate
