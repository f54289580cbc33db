"""Challenges: organisers make one from its spec and open, close and freeze its phases; every key reads a
challenge's settings and a phase's leaderboard as its visibility lets the caller see it.

- ``POST /challenges`` — the spec as JSON (:mod:`nlpbench.platform.challenge_specs`) → 201 and the challenge;
  organisers only (403), 409 when the name is taken, 400 naming the field that is wrong;
- ``GET /challenges/{name}`` — its phases with their state, window, tasks, datasets, kinds, quota, limits;
- ``POST /challenges/{name}/phases/{phase}/open`` (``{"until": "…Z"}`` optional), ``…/close``,
  ``…/freeze`` — organisers only; 409 for a frozen phase;
- ``POST /teams`` (``{affiliation, contact}``; ``name`` for organisers), ``GET /teams`` — registered teams
  (only they submit to a phase); a contact is shown to organisers and to its own team only;
- ``GET /challenges/{name}/phases/{phase}/leaderboard`` — as :func:`nlpbench.platform.challenges.leaderboard`
  lets the caller see it: a team never sees a private or blind phase's scores before it closes, nor in a
  blind one another team's submissions.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from nlpbench.api.platform.access import Stored, Who, acting_team, errors
from nlpbench.errors import Kind
from nlpbench.platform import challenges, teams
from nlpbench.platform.challenge_specs import NAME, parsed_spec
from nlpbench.platform.keys import Caller
from nlpbench.store.challenges import Phase

router = APIRouter(tags=["Challenges"])
Name = Annotated[str, Path(pattern=f"^{NAME.pattern}$")]


class Reopening(BaseModel):
    """When a phase opened now closes: its closing time, unless ``until`` says otherwise."""

    model_config = ConfigDict(extra="forbid")

    until: AwareDatetime | None = None


def _organiser(me: Caller, what: str) -> None:
    if not me.organiser:
        raise HTTPException(403, f"{what} is the organisers' to do")


@router.post("/challenges", status_code=201, responses=errors(Kind.forbidden, Kind.not_found, Kind.conflict))
def create(spec: Annotated[dict[str, Any], Body()], me: Who, store: Stored) -> dict[str, Any]:
    """Make a challenge and its phases from its spec (the fields of a spec file, as JSON)."""
    _organiser(me, "making a challenge")
    checked = parsed_spec(spec, "the request's spec")
    challenges.create(store, checked)
    return _shown(store, checked.name)


@router.get("/challenges/{name}", responses=errors(Kind.not_found))
def show(name: Name, me: Who, store: Stored) -> dict[str, Any]:
    """A challenge and its phases' settings and state now."""
    return _shown(store, name)


def _shown(store, name: str) -> dict[str, Any]:
    with store.session(readonly=True) as session:
        return challenges.challenge_json(session, challenges.challenge(session, name), datetime.now(UTC))


def _moved(found: Phase) -> dict[str, Any]:
    return challenges.phase_json(found, datetime.now(UTC))


@router.post("/challenges/{name}/phases/{phase}/open", responses=errors(Kind.forbidden, Kind.not_found, Kind.conflict))
def open_phase(
    name: Name, phase: Name, me: Who, store: Stored, body: Annotated[Reopening | None, Body()] = None
) -> dict[str, Any]:
    """Open the phase now, until its closing time or ``until``; never a frozen one."""
    _organiser(me, "opening a phase")
    until = body.until.astimezone(UTC) if body is not None and body.until is not None else None
    return _moved(challenges.open_phase(store, name, phase, datetime.now(UTC), until=until))


@router.post("/challenges/{name}/phases/{phase}/close", responses=errors(Kind.forbidden, Kind.not_found, Kind.conflict))
def close_phase(name: Name, phase: Name, me: Who, store: Stored) -> dict[str, Any]:
    """Close the phase now (freezing it if its spec says so)."""
    _organiser(me, "closing a phase")
    return _moved(challenges.close_phase(store, name, phase, datetime.now(UTC)))


@router.post(
    "/challenges/{name}/phases/{phase}/freeze", responses=errors(Kind.forbidden, Kind.not_found, Kind.conflict)
)
def freeze_phase(name: Name, phase: Name, me: Who, store: Stored) -> dict[str, Any]:
    """Freeze the phase now: closed for good."""
    _organiser(me, "freezing a phase")
    return _moved(challenges.freeze_phase(store, name, phase, datetime.now(UTC)))


@router.get("/challenges/{name}/phases/{phase}/leaderboard", responses=errors(Kind.not_found))
def leaderboard(name: Name, phase: Name, me: Who, store: Stored) -> dict[str, Any]:
    """The phase's leaderboard as the caller may see it now."""
    with store.session(readonly=True) as session:
        return challenges.leaderboard(session, challenges.phase(session, name, phase), me, datetime.now(UTC))


class Registration(BaseModel):
    """A team's registration: ``name`` for organisers (a team key registers its own team)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, max_length=60)
    affiliation: str = Field(default="", max_length=300)
    contact: str = Field(max_length=300)


@router.post("/teams", status_code=201, responses=errors(Kind.forbidden))
def register_team(body: Annotated[Registration, Body()], me: Who, store: Stored) -> dict[str, Any]:
    """Register a team (or update what it gave): a team key its own team, an organiser's any."""
    name = acting_team(me, body.name, "registration", "registers")
    made = teams.register(store, name, affiliation=body.affiliation, contact=body.contact)
    return teams.team_json(made, organiser=True)


@router.get("/teams", responses=errors())
def list_teams(me: Who, store: Stored) -> dict[str, Any]:
    """Every registered team with its affiliation; their contacts to organisers only (and a team its own)."""
    with store.session(readonly=True) as session:
        return {
            "teams": [
                teams.team_json(found, organiser=me.organiser or found.name == me.team)
                for found in teams.teams(session)
            ]
        }
