"""An item keeps its job's callback_url and batch id: the reviewed result is POSTed
there too (event job.reviewed).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable columns: both databases add them in place, the items there keep none.
    op.add_column("inbox_items", sa.Column("callback_url", sa.String(2048)))
    op.add_column("inbox_items", sa.Column("batch_id", sa.String(200)))


def downgrade() -> None:
    # SQLite drops a column by copying the table: batch mode does that.
    with op.batch_alter_table("inbox_items") as items:
        items.drop_column("batch_id")
        items.drop_column("callback_url")
