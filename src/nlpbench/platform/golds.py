"""The gold files of file-scored tasks: kept per task, dataset and version, found for a submission."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import cast

from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from nlpbench.errors import InputError
from nlpbench.platform import tasks
from nlpbench.platform.submitted import read_submitted
from nlpbench.store import Store
from nlpbench.store.submissions import TaskGold


def register_gold(
    store: Store, task: str, dataset: str, files: dict[str, Path], options: dict[str, str], version: str = "1"
) -> TaskGold:
    """Keep the gold files of a file-scored task on a dataset (replacing those of the same version).

    ``files`` maps each argument of the task's scoring function that takes a file (``gold``, ``all_ids``,
    ``valid_codes``, …) to its path; ``options`` fixes other arguments (``track=D``, ``mode=relaxed``, …).
    """
    if task not in tasks.file_tasks():
        raise InputError(f"task {task!r} is not scored from files; those are: {', '.join(tasks.file_tasks())}")
    gold_argument = tasks.spec(task).sides[0]
    if gold_argument not in files:
        raise InputError(f"the gold of {task} needs a file named {gold_argument} (--file {gold_argument}=PATH)")
    texts = {name: list(read_submitted(path)) for name, path in sorted(files.items())}
    digest = hashlib.sha256()
    for name, (_, content) in texts.items():
        digest.update(f"{name}\n{len(content)}\n".encode())
        digest.update(content.encode("utf-8", "surrogatepass"))
    with store.session() as session:
        session.execute(
            cast(Table, TaskGold.__table__)
            .delete()
            .where(TaskGold.task == task, TaskGold.dataset == dataset, TaskGold.version == version)
        )
        gold = TaskGold(
            task=task, dataset=dataset, version=version, files=texts, options=options, content_hash=digest.hexdigest()
        )
        session.add(gold)
        return gold


def find_gold(session: Session, task: str, dataset: str, version: str | None) -> TaskGold | None:
    query = select(TaskGold).where(TaskGold.task == task, TaskGold.dataset == dataset)
    if version is not None:
        query = query.where(TaskGold.version == version)
    return session.scalars(query.order_by(TaskGold.created_at.desc(), TaskGold.id.desc())).first()
