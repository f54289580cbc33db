"""The data node's dependencies: the key check (:func:`authorize`) and the store as the key reaches it (:class:`Data`).

:func:`authorize` runs on the event loop before every route but the health check: one lookup by a unique
index costs less than a thread's hand-off. It requires a key once ``app.state.keys_seen`` is true —
``Settings.require_keys``, or the first time a key is found in the store (keys are revoked, never
deleted, so once seen they are remembered) — and answers the datasets the key reaches.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException

from nlpbench.api.keys import presented_key, refused
from nlpbench.store import Store
from nlpbench.store import repository as repo
from nlpbench.store.keys import any_key, key_access

READ_METHODS = ("GET", "HEAD", "OPTIONS")
#: The operation that creates a dataset, which a key scoped to datasets may not do.
CREATE_DATASET = "createDataset"


async def authorize(request: Request) -> frozenset[str] | None:
    """The datasets the request's key reaches (None: every dataset, or no key needed yet); 401 or 403 else."""
    state = request.app.state
    if not state.keys_seen:
        with state.store.connection() as db:
            state.keys_seen = any_key(db)
        if not state.keys_seen:
            return None
    key = presented_key(request)
    with state.store.connection() as db:
        access = key_access(db, key)
    if access is None:
        raise refused("unknown, expired or revoked API key")
    if request.method not in READ_METHODS and access.scope != "write":
        raise HTTPException(403, "this API key may only read")
    creates_dataset = getattr(request.scope.get("route"), "operation_id", None) == CREATE_DATASET
    if access.datasets is not None and creates_dataset:
        raise HTTPException(403, "this API key is scoped to datasets: it may not create one")
    return access.datasets


@dataclass(frozen=True)
class Data:
    """The store as one request's key reaches it: sessions whose listings and lookups skip other datasets."""

    store: Store
    #: The datasets the key reaches; None: every dataset.
    reach: frozenset[str] | None = None

    @contextmanager
    def reading(self) -> Iterator[Session]:
        with self.store.session(readonly=True) as session:
            session.info[repo.REACH] = self.reach
            yield session

    @contextmanager
    def writing(self) -> Iterator[Session]:
        with self.store.session() as session:
            session.info[repo.REACH] = self.reach
            yield session


async def data(request: Request, reach: Annotated[frozenset[str] | None, Depends(authorize)]) -> Data:
    """The app's store as the request's key reaches it."""
    return Data(request.app.state.store, reach)


#: A route's parameter for :func:`data`.
Reached = Annotated[Data, Depends(data)]
