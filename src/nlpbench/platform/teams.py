"""Teams registered to take part in challenges: name, affiliation, and how to reach the members.

A submission to a challenge phase is made by a registered team only
(:func:`nlpbench.platform.challenges.admit`). A team registers itself with its own key (or an
organiser registers it) and may update what it gave; its affiliation is shown to everyone, its
contact to the organisers only — it names people.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.errors import InputError
from nlpbench.platform.challenge_specs import NAME
from nlpbench.platform.errors import NotFound
from nlpbench.store import Store
from nlpbench.store.challenges import Team

#: The most characters of an affiliation, and of a contact.
MAX_FIELD = 300


def register(store: Store, name: str, *, affiliation: str, contact: str) -> Team:
    """Register the team ``name``, or update what it gave; both fields one line of at most :data:`MAX_FIELD`."""
    if not NAME.fullmatch(name):
        raise InputError(f"team {name[:60]!r} is not a name (letters, digits, '_', '.', '-'; at most 60)")
    for value, record in ((affiliation, "affiliation"), (contact, "contact")):
        if len(value) > MAX_FIELD or any(c in value for c in "\x00\r\n"):
            raise InputError(f"one line of at most {MAX_FIELD} characters", record=record)
    if not contact.strip():
        raise InputError("how to reach the team's members (an e-mail address)", record="contact")
    with store.session() as session:
        team = session.scalars(select(Team).where(Team.name == name)).first()
        if team is None:
            team = Team(name=name)
            session.add(team)
        team.affiliation, team.contact = affiliation.strip(), contact.strip()
        session.flush()
        return team


def registered(session: Session, name: str) -> Team:
    """The registered team ``name``; :class:`NotFound` when it is not registered."""
    found = session.scalars(select(Team).where(Team.name == name[:60])).first()
    if found is None:
        raise NotFound(f"team {name[:60]} is not registered: register it first (nlpbench challenge team)")
    return found


def team_json(team: Team, *, organiser: bool) -> dict[str, Any]:
    """A team as a caller may see it: its contact to organisers only."""
    data = {"name": team.name, "affiliation": team.affiliation}
    return data | {"contact": team.contact} if organiser else data


def teams(session: Session) -> list[Team]:
    return list(session.scalars(select(Team).order_by(Team.name)))
