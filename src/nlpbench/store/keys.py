"""Data-node API keys: ``nbk_<prefix>_<secret>``, stored as the prefix and a SHA-256 of the secret.

A key is shown once, when it is made. Its secret is 32 random bytes, so one
SHA-256 is enough to make the stored hash useless to whoever reads the
database; the prefix finds the row and the hashes are compared in constant time.
A ``read`` key may read; a ``write`` key may also create and delete. A key may
expire (``expires_at``) and is revoked by setting ``revoked_at``: its row stays,
so that listing keys shows what each was and since when it stopped working,
and the count of keys never goes down (the data node requires keys as soon as
one exists, and may remember that). A key scoped to datasets reaches those
only: the data node treats every other dataset as absent.

The platform's keys (:mod:`nlpbench.platform.keys`, ``nbp_…``) are made,
parsed, checked and aged by the same functions — :func:`new_secret`,
:func:`parse_key`, :func:`secret_matches`, :func:`key_state` — in a table of
their own.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from nlpbench.store.models import ApiKey, Dataset, utcnow
from nlpbench.store.repository import NotFound, StoreError
from nlpbench.store.vocabulary import SCOPES

KEY_PREFIX = "nbk"


@dataclass(frozen=True)
class KeyInfo:
    """A key as ``keys list`` shows it: never its secret."""

    prefix: str
    scope: str
    label: str
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    #: The datasets the key reaches; None: every dataset.
    datasets: tuple[str, ...] | None = None

    def state(self, now: datetime | None = None) -> str:
        """``active``, ``expired`` or ``revoked``."""
        return key_state(self.expires_at, self.revoked_at, now)


@dataclass(frozen=True)
class Access:
    """What a valid key may do: its scope, and the datasets it reaches (None: every dataset)."""

    scope: str
    datasets: frozenset[str] | None = None

    def reaches(self, dataset: str) -> bool:
        return self.datasets is None or dataset in self.datasets


def key_state(expires_at: datetime | None, revoked_at: datetime | None, now: datetime | None = None) -> str:
    """``revoked`` once revoked, else ``expired`` from ``expires_at`` on (at ``now``, by default the present),
    else ``active``."""
    if revoked_at is not None:
        return "revoked"
    if expires_at is not None and expires_at <= (now or utcnow()):
        return "expired"
    return "active"


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret(kind: str) -> tuple[str, str, str]:
    """A new key of ``kind`` (``nbk``, ``nbp``): ``(prefix, SHA-256 of the secret, the whole key)``."""
    prefix, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    return prefix, _hash(secret), f"{kind}_{prefix}_{secret}"


def parse_key(key: str, kind: str) -> tuple[str, str] | None:
    """``(prefix, secret)`` of a key ``<kind>_<prefix>_<secret>``; None for anything else."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != kind:
        return None
    return parts[1], parts[2]


def secret_matches(secret_hash: str, secret: str) -> bool:
    """Whether ``secret`` hashes to the stored ``secret_hash``, compared in constant time."""
    return hmac.compare_digest(secret_hash, _hash(secret))


def create_key(
    session: Session,
    scope: str,
    label: str = "",
    *,
    expires_at: datetime | None = None,
    datasets: list[str] | None = None,
) -> str:
    """A new key with ``scope`` (``read`` or ``write``); returns the whole key, which is stored only hashed.

    ``expires_at``: when it stops working (None: never); ``datasets``: the only datasets it reaches, each of
    which must exist (None: every dataset).
    """
    if scope not in SCOPES:
        raise StoreError(f"scope {scope!r} is not one of {', '.join(SCOPES)}")
    if expires_at is not None and expires_at <= utcnow():
        raise StoreError(f"the expiry {expires_at.isoformat()} has passed")
    if datasets is not None:
        datasets = sorted(set(datasets))
        known = set(session.scalars(select(Dataset.name).where(Dataset.name.in_(datasets))))
        missing = [name for name in datasets if name not in known]
        if missing:
            raise NotFound(f"dataset {missing[0]!r} not found: a key is scoped to existing datasets only")
    prefix, secret_hash, key = new_secret(KEY_PREFIX)
    row = ApiKey(
        prefix=prefix, secret_hash=secret_hash, scope=scope, label=label, expires_at=expires_at, datasets=datasets
    )
    session.add(row)
    session.flush()
    return key


def key_access(db: Session | Connection, key: str, now: datetime | None = None) -> Access | None:
    """What a valid key may do; None for anything else (unknown, wrong secret, expired, revoked).

    One indexed read, in a session or a Core connection (the data node checks keys on its event loop).
    """
    parsed = parse_key(key, KEY_PREFIX)
    if parsed is None:
        return None
    columns = (ApiKey.secret_hash, ApiKey.scope, ApiKey.expires_at, ApiKey.revoked_at, ApiKey.datasets)
    row = db.execute(select(*columns).where(ApiKey.prefix == parsed[0])).first()
    if row is None or not secret_matches(row.secret_hash, parsed[1]):
        return None
    if key_state(row.expires_at, row.revoked_at, now) != "active":
        return None
    return Access(row.scope, None if row.datasets is None else frozenset(row.datasets))


def any_key(db: Session | Connection) -> bool:
    """Whether a key was ever made (revoked and expired ones count: rows are never deleted)."""
    return db.execute(select(ApiKey.id).limit(1)).first() is not None


def list_keys(session: Session) -> list[KeyInfo]:
    """Every key, oldest first, revoked and expired ones included."""
    rows = session.scalars(select(ApiKey).order_by(ApiKey.created_at, ApiKey.prefix))
    return [_info(row) for row in rows]


def revoke_key(session: Session, prefix: str) -> KeyInfo:
    """Revoke the key with ``prefix``: it stops working at once. Revoking a revoked key changes nothing.

    Returns the key as it is now (``revoked_at`` is when it was first revoked).
    """
    unrevoked = (ApiKey.prefix == prefix) & ApiKey.revoked_at.is_(None)
    session.execute(update(ApiKey).where(unrevoked).values(revoked_at=utcnow()))
    row = session.execute(select(ApiKey).where(ApiKey.prefix == prefix)).scalar()
    if row is None:
        raise NotFound(f"no API key with prefix {prefix!r}")
    return _info(row)


def _info(row: ApiKey) -> KeyInfo:
    datasets = None if row.datasets is None else tuple(row.datasets)
    return KeyInfo(row.prefix, row.scope, row.label, row.created_at, row.expires_at, row.revoked_at, datasets)
