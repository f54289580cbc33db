"""Which tasks a submission may name, and how each is fed: a dataset of the store run through tools, or files scored.

A PHI task (``date``, ``person_name``, ``location``, ``id``, ``contact``, or
``phi`` for all five) runs a tool over a dataset of the store, or takes a
prediction file in NLP Sandbox JSON; the registered task :data:`PHI_SCORER`
scores it. The task :data:`DEID` runs a de-identifier (``nlpsandbox:phi-deidentifier``)
over a dataset of the store, or takes a file of de-identified notes; the registered
task of that name scores the notes against the dataset's notes and gold standard.
Every other registered scoring task (:mod:`nlpbench.tasks`) takes a
prediction file, scored against a gold registered for that task and dataset
(:func:`nlpbench.platform.golds.register_gold`): the gold's files fill the
task's options by name (its gold side by the name of :attr:`~nlpbench.tasks.Task.sides`).
"""

from __future__ import annotations

from nlpbench import tasks
from nlpbench.model.phi import PHI_LABELS

PHI_TASKS: dict[str, tuple[str, ...]] = {label: (label,) for label in PHI_LABELS} | {"phi": PHI_LABELS}
#: The registered task that scores the PHI tasks' annotations.
PHI_SCORER = "sandbox"
#: The de-identification task: its tools de-identify the notes of a dataset of the store.
DEID = "deid"


def file_tasks() -> list[str]:
    """The registered tasks scored from a prediction file against a registered gold: every task but
    :data:`PHI_SCORER` and :data:`DEID`, which are scored against a dataset of the store."""
    return [name for name in tasks.load_all() if name not in (PHI_SCORER, DEID)]


def spec(task: str) -> tasks.Task:
    """The registered task that scores submissions of ``task``."""
    return tasks.get(PHI_SCORER if is_phi(task) else task)


def is_phi(task: str) -> bool:
    return task in PHI_TASKS


def is_deid(task: str) -> bool:
    return task == DEID


def on_dataset(task: str) -> bool:
    """Whether ``task`` runs over a dataset of the store (tools may be submitted): the PHI tasks and :data:`DEID`."""
    return is_phi(task) or is_deid(task)


def known(task: str) -> bool:
    return on_dataset(task) or task in file_tasks()


def names() -> list[str]:
    return [*PHI_TASKS, DEID, *file_tasks()]
