"""Platform API keys: ``nbp_<prefix>_<secret>``; a team key sees its own submissions, an organiser key all.

Kept apart from the data node's keys: a team's key must never read a private
dataset's notes. Stored as the prefix and a SHA-256 of the secret (32 random
bytes), compared in constant time; shown once, when made.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.errors import InputError
from nlpbench.store.submissions import PlatformKey

KEY_PREFIX = "nbp"
ROLES = ("team", "organiser")


@dataclass(frozen=True)
class Caller:
    """Who a key belongs to: an organiser (``team`` None) or a team."""

    role: str
    team: str | None

    @property
    def organiser(self) -> bool:
        return self.role == "organiser"


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_key(session: Session, *, team: str | None) -> str:
    """A new key: a team's when ``team`` is given, else an organiser's. Returns the whole key."""
    if team is not None and not team:
        raise InputError("a team key needs the team's name")
    prefix, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    role = "team" if team else "organiser"
    session.add(PlatformKey(prefix=prefix, secret_hash=_hash(secret), role=role, team=team))
    session.flush()
    return f"{KEY_PREFIX}_{prefix}_{secret}"


def caller(session: Session, key: str) -> Caller | None:
    """Whose key this is, None for anything that is not a valid key."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX:
        return None
    row = session.scalars(select(PlatformKey).where(PlatformKey.prefix == parts[1])).first()
    if row is None or not hmac.compare_digest(row.secret_hash, _hash(parts[2])):
        return None
    return Caller(row.role, row.team)
