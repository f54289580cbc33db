"""The store: datasets, notes, gold standards and predictions in SQLite or PostgreSQL.

:func:`open_store` opens (and migrates) a database and returns a
:class:`Store`, whose :meth:`~Store.session` is one transaction; the functions
of :mod:`nlpbench.store.repository` read and write inside it. ``store`` knows
only :mod:`nlpbench.model`.

Each name below loads its module on first use (PEP 562), so that importing a
light module of the package (:mod:`nlpbench.store.vocabulary`) does not import
SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: The module of this package that defines each name of ``__all__``.
_HOMES = {name: "engine" for name in ("ENV_VARIABLE", "Store", "default_path", "describe", "open_store", "resolve_url")}
_HOMES.update({name: "repository" for name in __all__ if name not in _HOMES})


def __getattr__(name: str) -> Any:
    """Load a name of ``__all__`` from its module on first use."""
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
