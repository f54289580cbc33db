"""Every test that takes ``db_url`` or ``store`` runs on SQLite and on PostgreSQL."""

from tests.store.backends import db_url, store  # noqa: F401
