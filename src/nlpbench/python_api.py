"""The Python API: score, compare and read from a notebook or a script, as the command line does.

``import nlpbench`` gives :func:`score`, :func:`compare`, :func:`read`,
:class:`Report`, ``nlpbench.tasks()`` and ``nlpbench.profiles(task)``; each is
loaded on first use, so that importing the package stays cheap.

>>> import nlpbench
>>> "sandbox" in nlpbench.tasks()
True
>>> nlpbench.profiles("sandbox")
['nlpsandbox', 'nlpsandbox-legacy', 'standard']

Every task scores through its registered spec (:mod:`nlpbench.tasks`), the
same code path as ``nlpbench score TASK``, so a report's JSON is the
command's, byte for byte.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlpbench.report.model import Report

if TYPE_CHECKING:
    from nlpbench.files import Input
    from nlpbench.model import Document
    from nlpbench.tasks import Task

__all__ = ["Report", "compare", "example", "profiles", "read", "score"]


def example(name: str) -> Path:
    """A file of the example gold/prediction pair embedded in nlpbench (``gold.json``, ``pred.json``).

    >>> example("gold.json").name
    'gold.json'
    """
    from importlib import resources  # imported here: it loads tempfile and random, which a score command never needs

    return Path(str(resources.files("nlpbench.data") / "examples" / name))


def score(task: str, gold: Any, pred: Any, *, profile: str = "standard", **options: Any) -> Report:
    """Score ``pred`` against ``gold`` with the task ``task`` under ``profile``.

    ``gold`` and ``pred`` are paths; files or folders given in memory
    (:class:`nlpbench.files.MemoryPath`: a name and a text, or a name and texts
    by their paths inside it), which every task reads as it reads a path; or,
    for the tasks that take them (``sandbox``, ``ner``), documents in memory
    (:class:`nlpbench.model.Document`).
    ``options`` are the task's own (``nlpbench.tasks.get(task).options()``),
    named as the command line names them with ``_`` for ``-``. Bad input raises
    :class:`nlpbench.errors.InputError`, an unknown task or profile
    :class:`nlpbench.registry.UnknownName`, an unknown option :class:`TypeError`.

    >>> report = score("sandbox", example("gold.json"), example("pred.json"), annotation_type="date")
    >>> row = report.score("instance_strict")
    >>> row["tp"], row["fp"], row["fn"], round(row["f1"], 4)
    (6, 0, 1, 0.9231)
    >>> import json
    >>> inputs = json.loads(report.to_json())["inputs"]
    >>> inputs["annotation_type"]
    'date'
    >>> from nlpbench.files import MemoryPath
    >>> lines = ["#begin document (d); part 0", "d 0 0 John - - - - - - - - (1)", "d 0 1 he - - - - - - - - (1)"]
    >>> key = MemoryPath.file("key.conll", "\\n".join([*lines, "", "#end document", ""]))
    >>> score("coref", key, key).score("conll")["f1"]
    1.0
    """
    from nlpbench import tasks

    spec = tasks.get(task)
    _check_options(spec, options)
    return spec.score(_side(spec, gold), _side(spec, pred), profile=profile, **options)


def compare(
    task: str,
    gold: Any,
    a: Any,
    b: Any,
    *,
    profile: str = "standard",
    metrics: Sequence[str] = (),
    test: str = "randomization",
    trials: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    **options: Any,
) -> Report:
    """Score systems ``a`` and ``b`` against the same ``gold`` and test every overall score's difference A − B.

    The result is ``nlpbench compare``'s report: a row per compared value with
    A's and B's scores, A − B, the paired bootstrap interval of the difference
    and the p-value of ``test`` (``randomization`` or ``bootstrap``); each
    system's warnings are marked ``A:`` or ``B:``.

    >>> compared = compare("sandbox", example("gold.json"), example("pred.json"), example("gold.json"),
    ...                    annotation_type="date", trials=200)
    >>> row = next(r for r in compared.scores if r["metric"] == "instance_strict" and r["score"] == "f1")
    >>> round(row["a"], 4), row["b"], round(row["difference"], 4)
    (0.9231, 1.0, -0.0769)
    """
    from nlpbench.stats.compare import compare_reports

    reports = []
    for name, side in (("A", a), ("B", b)):
        report = score(task, gold, side, profile=profile, **options)
        report.warnings = [f"{name}: {warning}" for warning in report.warnings]
        reports.append(report)
    return compare_reports(*reports, metrics=metrics, test=test, trials=trials, confidence=confidence, seed=seed)


def read(format: str, path: Input) -> list[Document]:
    """The documents of the file ``path`` in ``format`` (a name of ``nlpbench formats``); the file may be given
    in memory (:class:`nlpbench.files.MemoryPath`).

    >>> documents = read("sandbox", example("gold.json"))
    >>> len(documents), sorted({annotation.label for annotation in documents[0].annotations})[:2]
    (3, ['contact', 'date'])
    """
    from nlpbench import files, formats

    return list(formats.get(format).read(files.source(path)))


def profiles(task: str) -> list[str]:
    """The names of the profiles ``task`` scores under, ``standard`` among them.

    >>> profiles("coref")
    ['conll2012', 'e2e', 'standard']
    """
    from nlpbench import profiles as registered
    from nlpbench import tasks

    return registered.names(tasks.get(task).profiles)


def _side(spec: Task, given: Any) -> Any:
    """A side as the task takes it: a path or a file in memory as it is, documents in memory wrapped for its
    readers."""
    from nlpbench.files import MemoryPath
    from nlpbench.tasks import InMemory

    if isinstance(given, str | os.PathLike | MemoryPath | InMemory) or hasattr(given, "read"):
        return given
    if not isinstance(given, Iterable):
        raise TypeError(f"a side of {spec.name} is a path or documents, not {type(given).__name__}")
    if not spec.in_memory:
        raise TypeError(f"task {spec.name} reads its sides from files: give paths")
    return InMemory(tuple(given))


def _check_options(spec: Task, options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(spec.options()))
    if unknown:
        known = ", ".join(spec.options()) or "none"
        raise TypeError(f"task {spec.name} has no option {', '.join(unknown)}; its options: {known}")


class _Profiles(types.ModuleType):
    """:mod:`nlpbench.profiles`, callable: ``nlpbench.profiles(task)`` lists a task's profiles (:func:`profiles`)."""

    def __call__(self, task: str) -> list[str]:
        return profiles(task)


def _callable_profiles() -> types.ModuleType:
    """The profiles package, made callable here, at the top of the layers: it cannot look tasks up itself."""
    importlib.import_module("nlpbench.profiles")
    module = sys.modules["nlpbench.profiles"]
    module.__class__ = _Profiles
    return module
