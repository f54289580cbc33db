"""``GET /healthCheck``: the only platform request without a key."""

from __future__ import annotations

from fastapi import APIRouter

from nlpbench.api.platform.access import Stored, errors
from nlpbench.platform import queue as queues

router = APIRouter()


@router.get("/healthCheck", tags=["Health"], responses=errors(keyed=False))
def health(store: Stored) -> dict[str, str]:
    with store.session(readonly=True) as session:
        queues.listed(session, limit=1)
    return {"status": "pass"}
