"""Which tasks a submission may name, and how each is fed: PHI types annotated by tools, or files scored.

A PHI task (``date``, ``person_name``, ``location``, ``id``, ``contact``, or
``phi`` for all five) runs a tool over a dataset of the store, or takes a
prediction file in NLP Sandbox JSON. Every other scoring task takes a
prediction file, scored against a gold registered for that task and dataset
(:func:`nlpbench.platform.golds.register_gold`): the gold's files fill the
task's arguments by name, and the prediction file fills ``PRED_ARGUMENT``.
"""

from __future__ import annotations

from nlpbench.runner.client import PHI_LABELS

PHI_TASKS: dict[str, tuple[str, ...]] = {label: (label,) for label in PHI_LABELS} | {"phi": PHI_LABELS}
FILE_TASKS = ("timelines", "codiesp", "coref", "ner", "linking", "relations", "i2b2")
#: The argument of a task's scoring function that takes the gold file, and the one that takes the predictions.
GOLD_ARGUMENT = {"coref": "key"}
PRED_ARGUMENT = {"coref": "response"}
#: Arguments that take a list of files.
LIST_ARGUMENTS = frozenset({"valid_codes"})


def is_phi(task: str) -> bool:
    return task in PHI_TASKS


def known(task: str) -> bool:
    return task in PHI_TASKS or task in FILE_TASKS


def names() -> list[str]:
    return [*PHI_TASKS, *FILE_TASKS]
