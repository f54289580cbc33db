"""``POST /archives``: an archive a team's tool runs from, kept by digest for that team."""

from __future__ import annotations

import tempfile
from typing import Annotated, Any, BinaryIO, cast

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from nlpbench.api.platform.access import Stored, Who, acting_team, errors
from nlpbench.errors import Kind
from nlpbench.platform import queue as queues
from nlpbench.store import artifacts

router = APIRouter(tags=["Submissions"])
#: An upload is held in memory up to this size, then in a temporary file, before it goes into the store.
SPOOL_BYTES = 8 * 2**20


@router.post("/archives", status_code=201, responses=errors(Kind.forbidden, Kind.not_found, Kind.too_large))
async def upload(
    request: Request,
    me: Who,
    store: Stored,
    kind: Annotated[str, Query(pattern="^(source|image)$")],
    team: Annotated[str | None, Query(pattern=f"^{queues.NAME_PATTERN}$")] = None,
) -> dict[str, Any]:
    """An archive a team's tool runs from, kept by digest for that team: its source, or an OCI image."""
    owner = acting_team(me, team, "upload", "uploads for", " (?team=NAME)")
    limit = request.app.state.settings.max_archive_bytes
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as body:
        async for chunk in request.stream():
            body.write(chunk)
        body.seek(0)
        # a spooled file opened in binary mode (its default) is a binary file
        digest = await run_in_threadpool(queues.upload, store, cast(BinaryIO, body), kind, owner, limit=limit)
    with store.session(readonly=True) as session:
        artifact = artifacts.get(session, digest, owner)
        return {"digest": artifact.digest, "kind": kind, "size": artifact.size}
