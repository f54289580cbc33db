"""The dependency that hands a route the app's note cache (``app.state.note_cache``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from nlpbench.api.tool.cache import NoteCache


async def note_cache(request: Request) -> NoteCache:
    """The cache of the annotator the app serves."""
    return request.app.state.note_cache


#: A route's parameter for :func:`note_cache`.
Cached = Annotated[NoteCache, Depends(note_cache)]
