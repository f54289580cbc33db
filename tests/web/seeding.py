"""A store seeded through the platform's own functions: datasets, submissions, a worker that scores them.

Two PHI datasets (``open-notes`` public, ``closed-notes`` private, whose every
note carries :data:`CANARY`), prediction files from three teams that drop a
different share of the gold annotations, a tool served on 127.0.0.1, and a
NER gold with a prediction file, all submitted with
:func:`nlpbench.platform.queue.submit` and scored by a
:class:`nlpbench.platform.worker.Worker`, which stores the rank groups pages read with each result.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

from nlpbench import formats
from nlpbench.cli.dataset import import_documents
from nlpbench.platform import queue
from nlpbench.platform.worker import Worker
from nlpbench.store import Store
from nlpbench.synth import generate
from tests.cli.test_score_ner import GOLD, PRED

CANARY = "ZEBRA-CANARY-4417 lives here"
PUBLIC, PRIVATE = "open-notes", "closed-notes"
#: team → keep every annotation whose index modulo this is not 0 (so they score differently).
TEAMS = {"alpha": 7, "beta": 3, "gamma": 2}
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _predictions(documents, drop_every: int, scratch: Path) -> str:
    kept = [
        dataclasses.replace(d, annotations=[a for i, a in enumerate(d.annotations) if i % drop_every])
        for d in documents
    ]
    path = scratch / "predictions.json"
    formats.get("sandbox").write(kept, path)
    return path.read_text(encoding="utf-8")


def seed(store: Store, scratch: Path, tool_url: str | None = None) -> dict[str, int]:
    """Fill ``store``; the submission ids by ``team/task/dataset``."""
    public = list(generate(6, seed=11))
    private = [dataclasses.replace(d, text=f"{d.text}\n{CANARY}\n") for d in generate(6, seed=12)]
    import_documents(store, PUBLIC, public, "synth", public=True)
    import_documents(store, PRIVATE, private, "synth")
    ids: dict[str, int] = {}
    moment = START
    for team, drop in TEAMS.items():
        for dataset, documents in ((PUBLIC, public), (PRIVATE, private)):
            for task in ("phi", "date"):
                request = queue.Request(
                    team=team,
                    task=task,
                    dataset=dataset,
                    predictions=_predictions(documents, drop, scratch),
                    predictions_name=f"{team}.json",
                )
                ids[f"{team}/{task}/{dataset}"] = queue.submit(store, request, moment=moment)
                moment += timedelta(days=1)
    if tool_url is not None:
        ids[f"delta/date/{PRIVATE}"] = queue.submit(
            store, queue.Request(team="delta", task="date", dataset=PRIVATE, tool_url=tool_url), moment=moment
        )
    gold, pred = scratch / "gold.conll", scratch / "pred.conll"
    gold.write_text(GOLD)
    pred.write_text(PRED)
    queue.register_gold(store, "ner", "conll-demo", {"gold": gold}, {"pred_format": "conll"})
    ids["alpha/ner/conll-demo"] = queue.submit(
        store,
        queue.Request(team="alpha", task="ner", dataset="conll-demo", predictions=PRED, predictions_name="pred.conll"),
        moment=moment,
    )
    Worker(store, poll=0.05, lease=30).run(until_idle=True)
    return ids
