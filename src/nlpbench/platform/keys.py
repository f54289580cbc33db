"""Platform API keys: ``nbp_<prefix>_<secret>``; a team key sees its own submissions, an organiser key all.

Kept apart from the data node's keys: a team's key must never read a private
dataset's notes. Stored as the prefix and a SHA-256 of the secret (32 random
bytes), compared in constant time; shown once, when made. A key has a label,
may expire, and can be revoked; an expired or revoked key is refused as an
unknown one is. Nothing is cached: every request looks its key up, so a key
made, revoked or expired while a server runs counts at once. A key is named
in listings and revocations by its public part, ``nbp_<prefix>``. Made,
parsed, checked and aged as the data node's keys are (:mod:`nlpbench.store.keys`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.errors import InputError
from nlpbench.store.keys import key_state, new_secret, parse_key, secret_matches
from nlpbench.store.submissions import PlatformKey

KEY_PREFIX = "nbp"
ROLES = ("team", "organiser")


class UnknownKey(InputError):
    """No key has that public part."""


@dataclass(frozen=True)
class Caller:
    """Who a key belongs to: an organiser (``team`` None) or a team."""

    role: str
    team: str | None

    @property
    def organiser(self) -> bool:
        return self.role == "organiser"


@dataclass(frozen=True)
class KeyInfo:
    """A key as listings show it: its public part, whose it is, and whether it works now."""

    name: str
    role: str
    team: str | None
    label: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None

    def state(self, moment: datetime) -> str:
        """``active``, ``expired`` or ``revoked`` at ``moment``."""
        return key_state(self.expires_at, self.revoked_at, moment)


def create_key(session: Session, *, team: str | None, label: str = "", expires_at: datetime | None = None) -> str:
    """A new key: a team's when ``team`` is given, else an organiser's; refused from ``expires_at`` on.
    Returns the whole key."""
    if team is not None and not team:
        raise InputError("a team key needs the team's name")
    if expires_at is not None and expires_at <= datetime.now(UTC):
        raise InputError(f"{expires_at:%Y-%m-%d %H:%M} UTC has passed: a key must expire later", record="--expires")
    prefix, secret_hash, key = new_secret(KEY_PREFIX)
    role = "team" if team else "organiser"
    session.add(
        PlatformKey(prefix=prefix, secret_hash=secret_hash, role=role, team=team, label=label, expires_at=expires_at)
    )
    session.flush()
    return key


def list_keys(session: Session, *, team: str | None = None) -> list[KeyInfo]:
    """Every key (of ``team``), oldest first; never a secret."""
    query = select(PlatformKey).order_by(PlatformKey.id)
    if team is not None:
        query = query.where(PlatformKey.team == team)
    return [_info(row) for row in session.scalars(query)]


def revoke_key(session: Session, name: str) -> KeyInfo:
    """Revoke the key named ``nbp_<prefix>`` (or given whole); revoking it again changes nothing."""
    parts = name.split("_", 2)
    prefix = parts[1] if len(parts) >= 2 and parts[0] == KEY_PREFIX else None
    row = session.scalars(select(PlatformKey).where(PlatformKey.prefix == prefix)).first() if prefix else None
    if row is None:
        raise UnknownKey(f"no key {name[:20]!r}: keys are named nbp_<prefix> (see the key list)")
    if row.revoked_at is None:
        row.revoked_at = datetime.now(UTC)
    session.flush()
    return _info(row)


def _info(row: PlatformKey) -> KeyInfo:
    return KeyInfo(
        f"{KEY_PREFIX}_{row.prefix}", row.role, row.team, row.label, row.created_at, row.expires_at, row.revoked_at
    )


def caller(session: Session, key: str) -> Caller | None:
    """Whose key this is, None for anything that is not a valid key now (unknown, expired or revoked)."""
    parsed = parse_key(key, KEY_PREFIX)
    if parsed is None:
        return None
    row = session.scalars(select(PlatformKey).where(PlatformKey.prefix == parsed[0])).first()
    if row is None or not secret_matches(row.secret_hash, parsed[1]):
        return None
    if _info(row).state(datetime.now(UTC)) != "active":
        return None
    return Caller(row.role, row.team)
