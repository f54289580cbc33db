"""Data-node API keys: ``nbk_<prefix>_<secret>``, stored as the prefix and a SHA-256 of the secret.

A key is shown once, when it is made. Its secret is 32 random bytes, so one
SHA-256 is enough to make the stored hash useless to whoever reads the
database; the prefix finds the row and the hashes are compared in constant time.
A ``read`` key may read; a ``write`` key may also create and delete.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from nlpbench.store.models import SCOPES, ApiKey
from nlpbench.store.repository import NotFound, StoreError

KEY_PREFIX = "nbk"


@dataclass(frozen=True)
class KeyInfo:
    prefix: str
    scope: str
    label: str
    created_at: datetime


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_key(session: Session, scope: str, label: str = "") -> str:
    """A new key with ``scope`` (``read`` or ``write``); returns the whole key, which is stored only hashed."""
    if scope not in SCOPES:
        raise StoreError(f"scope {scope!r} is not one of {', '.join(SCOPES)}")
    prefix, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    session.add(ApiKey(prefix=prefix, secret_hash=_hash(secret), scope=scope, label=label))
    session.flush()
    return f"{KEY_PREFIX}_{prefix}_{secret}"


def key_scope(session: Session, key: str) -> str | None:
    """The scope of a valid key, None for anything else."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX:
        return None
    row = session.execute(select(ApiKey).where(ApiKey.prefix == parts[1])).scalar()
    if row is None or not hmac.compare_digest(row.secret_hash, _hash(parts[2])):
        return None
    return row.scope


def count_keys(session: Session) -> int:
    return session.execute(select(func.count()).select_from(ApiKey)).scalar_one()


def list_keys(session: Session) -> list[KeyInfo]:
    rows = session.scalars(select(ApiKey).order_by(ApiKey.created_at, ApiKey.prefix))
    return [KeyInfo(row.prefix, row.scope, row.label, row.created_at) for row in rows]


def revoke_key(session: Session, prefix: str) -> None:
    if not session.execute(delete(ApiKey).where(ApiKey.prefix == prefix)).rowcount:
        raise NotFound(f"no API key with prefix {prefix!r}")
