"""The answer cache: a model's answers on disk, keyed by (template hash, model, note hash), so a rerun costs nothing.

One SQLite file (by default ``llm-answers.sqlite`` in nlpbench's per-user
data folder, beside the store). The key is the SHA-256 of the template's
SHA-256, the model's name and the note's SHA-256, so the note's text is
never a key; the value is the model's message with the tokens and latency of
the call that produced it, so a cached answer reports what it cost when it
was made. Only answers that parsed are stored (a malformed one is asked
again). The file holds model answers, which quote notes: it is PHI at rest,
like the store, and lives where the store does.

The cache is bounded in bytes (``max_bytes``): past it, the least recently
written answers go. SQLite serialises writers; each call opens its own
connection, so the tool's worker threads share the file safely.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The cache's default bound: 256 MiB of answers.
CACHE_BYTES = 256 * 2**20
FILE_NAME = "llm-answers.sqlite"


@dataclass(frozen=True, slots=True)
class Answer:
    """A model's message about one note and what the call took: tokens in and out, milliseconds."""

    content: str
    tokens_in: int
    tokens_out: int
    latency_ms: int


def default_path() -> Path:
    """``llm-answers.sqlite`` in nlpbench's per-user data folder."""
    from platformdirs import user_data_path

    return user_data_path("nlpbench", appauthor=False) / FILE_NAME


def answer_key(template_sha256: str, model: str, note_text: str) -> str:
    """SHA-256 of ``template hash NUL model NUL note hash``: the note is hashed first, never stored as a key."""
    note_sha256 = hashlib.sha256(note_text.encode("utf-8", "surrogatepass")).hexdigest()
    return hashlib.sha256(f"{template_sha256}\0{model}\0{note_sha256}".encode()).hexdigest()


class AnswerCache:
    """``get(key)`` and ``put(key, answer)`` over one SQLite file, at most ``max_bytes`` of answers."""

    def __init__(self, path: Path, max_bytes: int = CACHE_BYTES):
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, content TEXT NOT NULL, "
                "tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL, latency_ms INTEGER NOT NULL, "
                "size INTEGER NOT NULL, written REAL NOT NULL)"
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode, closed after use."""
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            yield db
        finally:
            db.close()

    def get(self, key: str) -> Answer | None:
        """The answer stored under ``key``, or None."""
        with self._connect() as db:
            row = db.execute(
                "SELECT content, tokens_in, tokens_out, latency_ms FROM answers WHERE key = ?", (key,)
            ).fetchone()
        return Answer(*row) if row else None

    def put(self, key: str, answer: Answer) -> None:
        """Store ``answer`` under ``key``, then drop the oldest answers while the total passes ``max_bytes``."""
        size = len(answer.content.encode("utf-8", "surrogatepass"))
        if size > self.max_bytes:
            return
        with self._lock, self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, answer.content, answer.tokens_in, answer.tokens_out, answer.latency_ms, size, time.time()),
            )
            total = db.execute("SELECT COALESCE(SUM(size), 0) FROM answers").fetchone()[0]
            while total > self.max_bytes:
                oldest, oldest_size = db.execute("SELECT key, size FROM answers ORDER BY written LIMIT 1").fetchone()
                db.execute("DELETE FROM answers WHERE key = ?", (oldest,))
                total -= oldest_size
            db.execute("COMMIT")

    def __len__(self) -> int:
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
