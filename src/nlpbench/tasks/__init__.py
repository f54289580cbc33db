"""Scoring tasks: each reads its inputs, scores them under a profile and returns a Report.

Every task is one registered spec (:class:`Task`): its name, its inputs (the
two sides, the formats they read, the options that name files), its profile
family, and ``score(gold, pred, *, profile, **options) -> Report``, gold
first. The command line (``nlpbench score TASK``, ``compare``), the Python
API (:func:`nlpbench.score`), the worker, ``rescore`` and the leaderboard all
read :data:`REGISTRY`, so adding a task is one module that calls
:func:`register` (see docs/how-to/add-a-scoring-task.md).
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import importlib.util
import inspect
import pkgutil
import sys
import types
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nlpbench import files
from nlpbench.registry import Registry
from nlpbench.report import Report

if TYPE_CHECKING:
    from nlpbench.model import Document

#: Keyword arguments every task's ``score`` may take that are not options of the task.
_CONTROLS = ("gold", "pred", "profile", "on_document", "per_document")


@dataclass(frozen=True)
class Task:
    """A scoring task: what it reads and how it scores.

    ``score(gold, pred, *, profile, **options) -> Report`` scores predictions
    against gold under a profile of the family ``profiles``; ``gold`` and
    ``pred`` are paths (or what the task's readers take in their place), and
    ``sides`` are the words the command line and stored gold use for them
    (``--gold``/``--pred``; coreference's ``--key``/``--response``).
    ``formats`` are the formats the sides read, the default first; ``files``
    the other options that name files, ``lists`` those that take several;
    ``in_memory`` says whether a side may be documents given in memory
    (:class:`InMemory`) instead of a path.
    """

    name: str
    summary: str
    profiles: str
    score: Callable[..., Report]
    sides: tuple[str, str] = ("gold", "pred")
    formats: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()
    in_memory: bool = False

    def options(self) -> list[str]:
        """The keyword options of :attr:`score` beyond gold, pred, profile and the progress controls."""
        parameters = inspect.signature(self.score).parameters
        return [name for name in parameters if name not in _CONTROLS]

    def takes(self, name: str) -> bool:
        """Whether :attr:`score` takes the keyword argument ``name``."""
        return name in inspect.signature(self.score).parameters


REGISTRY: Registry[Task] = Registry("task")


def register(
    name: str,
    summary: str,
    profiles: str,
    *,
    sides: tuple[str, str] = ("gold", "pred"),
    formats: tuple[str, ...] = (),
    files: tuple[str, ...] = (),
    lists: tuple[str, ...] = (),
    in_memory: bool = False,
) -> Callable[[Callable[..., Report]], Callable[..., Report]]:
    """Decorator: register ``score(gold, pred, *, profile, **options)`` as the task ``name`` (see :class:`Task`)."""

    def decorate(score: Callable[..., Report]) -> Callable[..., Report]:
        REGISTRY.register(name, Task(name, summary, profiles, score, sides, formats, files, lists, in_memory))
        return score

    return decorate


def get(name: str) -> Task:
    """The task ``name``; an unknown name raises :class:`nlpbench.registry.UnknownName` listing the known ones.

    A task lives in the module of its name (``nlpbench.tasks.sandbox``), so only that module is
    imported, with the metrics and readers it needs; a name no module is named after makes every
    module load (a module may register a task under another name), and then the error lists them all.
    """
    if name not in REGISTRY:
        if name.isidentifier() and importlib.util.find_spec(f"{__name__}.{name}") is not None:
            importlib.import_module(f"{__name__}.{name}")
        if name not in REGISTRY:
            load_all()
    return REGISTRY.get(name)


@dataclass(frozen=True)
class InMemory:
    """Documents given in memory as one side of a task, read as a file holding them would be."""

    documents: tuple[Document, ...]

    def __str__(self) -> str:
        return "(in memory)"

    def read(self, labels: Collection[str] | None = None) -> Iterator[Document]:
        """The documents, each with only the annotations of ``labels`` (all of them without)."""
        for document in self.documents:
            if labels is None:
                yield document
            else:
                kept = [annotation for annotation in document.annotations if annotation.label in labels]
                yield dataclasses.replace(document, annotations=kept)


def side_documents(source: Any, fmt: str) -> Iterable[Document]:
    """A side's documents: those of an in-memory source (:class:`InMemory`), else the file ``source`` read
    as ``fmt`` (a format of :mod:`nlpbench.formats`)."""
    if isinstance(source, InMemory):
        return source.read()
    from nlpbench import formats

    return formats.get(fmt).read(files.source(source))


@contextmanager
def collector_paused() -> Iterator[None]:
    """Hold Python's cycle collector while a task turns a corpus into objects and counts.

    Those objects form no reference cycles (reference counting frees them), yet
    each burst of allocations makes the collector walk every live object again,
    imported modules included: scoring 50,000 notes or reading 250,000 codes
    takes 40–50% less time without it. It runs again, as before, when the block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_all() -> list[str]:
    """Import every module of this package (a task module registers its task when imported); the task names."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return REGISTRY.names()


class _Listing(types.ModuleType):
    """This package, callable: ``nlpbench.tasks()`` lists the registered task names (the package keeps
    its name, so that ``nlpbench.tasks`` is both the registry's module and the function the API promises)."""

    def __call__(self) -> list[str]:
        return load_all()


sys.modules[__name__].__class__ = _Listing
