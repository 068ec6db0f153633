"""Alembic's entry for the inbox's migrations, run only programmatically
(vetq.inbox.database.migrate hands it an open connection): there is no alembic.ini."""

from __future__ import annotations

from alembic import context

from vetq.inbox.database import VERSION_TABLE
from vetq.inbox.models import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,
    # SQLite alters a table by copying it: batch mode does that for any later migration.
    render_as_batch=True,
)
with context.begin_transaction():
    context.run_migrations()
