"""Alembic environment: migrations run in process on the connection :mod:`nlpbench.store.engine` passes."""

from __future__ import annotations

from alembic import context

from nlpbench.store.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
