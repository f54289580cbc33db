"""The platform API's dependencies: the app's store and settings, and the caller by its platform key.

Keys are looked up at every request (:func:`nlpbench.platform.keys.caller`), so one made, revoked or
expired while the server runs counts at once.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from starlette.exceptions import HTTPException

from nlpbench.api.keys import presented_key, refused
from nlpbench.api.problems import Responses, problem_docs
from nlpbench.errors import Kind
from nlpbench.platform.keys import Caller, caller
from nlpbench.store import Store


def who(request: Request) -> Caller:
    """The caller of a request, by its platform API key (``X-API-Key`` or ``Authorization: Bearer``)."""
    key = presented_key(request)
    with request.app.state.store.session(readonly=True) as session:
        found = caller(session, key)
    if found is None:
        raise refused("unknown API key")
    return found


def acting_team(me: Caller, named: str | None, what: str, acts: str, how: str = "") -> str:
    """The team a request acts for: the one it names, when an organiser makes it (400 when it names none); the
    key's own team, when a team makes it (403 when it names another). ``what``, ``how`` and ``acts`` word the
    refusals: "an organiser's {what} names its team{how}", "a team key {acts} its own team only"."""
    team = named if me.organiser else me.team
    if team is None:
        raise HTTPException(400, f"an organiser's {what} names its team{how}")
    if not me.organiser and named not in (None, me.team):
        raise HTTPException(403, f"a team key {acts} its own team only")
    return team


async def store(request: Request) -> Store:
    """The store the app serves."""
    return request.app.state.store


#: A route's parameter for the caller; 401 without a valid key.
Who = Annotated[Caller, Depends(who)]
#: A route's parameter for the store.
Stored = Annotated[Store, Depends(store)]


def errors(*kinds: Kind, keyed: bool = True) -> Responses:
    """The problems a route documents: ``kinds``, and what any route may answer: 400 (an invalid request), 401
    (no valid key, unless the route takes none), 503 (the database did not answer) and 500."""
    unauthorized = {401: "No valid API key"} if keyed else {}
    return problem_docs((Kind.input, Kind.unavailable, *kinds), also=unauthorized)
