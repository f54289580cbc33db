"""The store: datasets, notes, gold standards and predictions in SQLite or PostgreSQL.

:func:`open_store` opens (and migrates) a database and returns a
:class:`Store`, whose :meth:`~Store.session` is one transaction; the functions
of :mod:`nlpbench.store.repository` read and write inside it. ``store`` knows
only :mod:`nlpbench.model`.
"""

from nlpbench.store.engine import ENV_VARIABLE, Store, default_path, describe, open_store, resolve_url
from nlpbench.store.repository import (
    EVALUATION,
    GOLDSTANDARD,
    Conflict,
    ImportItem,
    ImportSummary,
    MissingParent,
    NoteRow,
    NotFound,
    Page,
    StoreError,
)

__all__ = [
    "ENV_VARIABLE",
    "EVALUATION",
    "GOLDSTANDARD",
    "Conflict",
    "ImportItem",
    "ImportSummary",
    "MissingParent",
    "NotFound",
    "NoteRow",
    "Page",
    "Store",
    "StoreError",
    "default_path",
    "describe",
    "open_store",
    "resolve_url",
]
