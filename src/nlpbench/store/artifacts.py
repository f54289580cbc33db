"""Uploaded tool archives in the store: kept by content digest, in chunks, read back as a stream.

A team brings its tool as an archive (an OCI image archive, or a source
archive with its start command): :func:`put` reads it from a binary stream
at most :data:`CHUNK_BYTES` at a time, refuses it past ``limit`` bytes, and
stores it once per team by its SHA-256 (``sha256:<hex>``) — the same bytes
uploaded twice by a team are one artifact; :func:`write_to` writes it back to a file for a
worker, checking the digest as it goes. Every worker sharing the store reads
it; nothing holds an archive whole in memory.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import BinaryIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.errors import Kind
from nlpbench.store.repository import NotFound, StoreError
from nlpbench.store.submissions import Artifact, ArtifactChunk

#: The bytes of one stored chunk.
CHUNK_BYTES = 4 * 2**20
KINDS = ("oci-archive", "source-archive")


class TooLarge(StoreError):
    """An upload past its size limit; one line naming the limit."""

    kind = Kind.too_large


def put(session: Session, stream: BinaryIO, kind: str, *, limit: int, team: str | None = None) -> Artifact:
    """Store the bytes of ``stream`` (at most ``limit``) as an artifact of ``kind``; the artifact, new or existing.

    The chunks are written as they are read (inside the caller's transaction);
    an upload past ``limit`` or equal to an existing artifact leaves nothing new.
    """
    if kind not in KINDS:
        raise StoreError(f"artifact kind {kind!r} is not one of {', '.join(KINDS)}")
    digest, size = hashlib.sha256(), 0
    pending = Artifact(digest=f"pending:{secrets.token_hex(16)}", kind=kind, size=0, team=team)
    with session.begin_nested() as nested:
        session.add(pending)
        session.flush()
        seq = 0
        while chunk := stream.read(CHUNK_BYTES):
            size += len(chunk)
            if size > limit:
                nested.rollback()
                raise TooLarge(f"the archive is over the {limit} bytes an upload may have")
            digest.update(chunk)
            session.add(ArtifactChunk(artifact_id=pending.id, seq=seq, data=chunk))
            session.flush()
            seq += 1
        name = f"sha256:{digest.hexdigest()}"
        existing = session.scalars(select(Artifact).where(Artifact.digest == name, Artifact.team == team)).first()
        if existing is not None:
            nested.rollback()
            return existing
        pending.digest, pending.size = name, size
    return pending


def get(session: Session, digest: str, team: str | None = None) -> Artifact:
    """The artifact ``sha256:…`` (one ``team`` uploaded, when given); :class:`NotFound` when there is none."""
    query = select(Artifact).where(Artifact.digest == digest)
    if team is not None:
        query = query.where(Artifact.team == team)
    found = session.scalars(query.order_by(Artifact.id)).first()
    if found is None:
        raise NotFound(f"no uploaded archive {digest[:80]}" + (f" of team {team}" if team else ""))
    return found


def write_to(session: Session, digest: str, sink: BinaryIO) -> int:
    """Write the artifact's bytes to ``sink`` in order, checking its digest; the number of bytes."""
    artifact = get(session, digest)
    check, size = hashlib.sha256(), 0
    query = select(ArtifactChunk.data).where(ArtifactChunk.artifact_id == artifact.id).order_by(ArtifactChunk.seq)
    for data in session.scalars(query.execution_options(yield_per=1)):
        check.update(data)
        sink.write(data)
        size += len(data)
    if f"sha256:{check.hexdigest()}" != digest or size != artifact.size:
        raise StoreError(f"uploaded archive {digest[:80]} is damaged in the store (its bytes do not match)")
    return size
