"""The inbox's first tables: reviewers, their sessions, items and items' fields.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from vetq.inbox.models import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "inbox_reviewers",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
    )
    op.create_table(
        "inbox_sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("reviewer_id", sa.Integer, sa.ForeignKey("inbox_reviewers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_inbox_sessions_reviewer_id", "inbox_sessions", ["reviewer_id"])
    op.create_table(
        "inbox_items",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("job_id", sa.String(200), nullable=False, unique=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("schema_name", sa.String(200), nullable=False),
        sa.Column("schema_hash", sa.String(64)),
        sa.Column("schema_ref", sa.JSON),
        sa.Column("document_text", sa.Text),
        sa.Column("document_pdf", sa.LargeBinary),
        sa.Column("machine_result", sa.JSON, nullable=False),
        sa.Column("trace_id", sa.String(128)),
        sa.Column("tenant", sa.String(200)),
        sa.Column("priority", sa.String(8), nullable=False),
        sa.Column("priority_rank", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("ingested_at", UTCDateTime, nullable=False),
        sa.Column("claimed_by", sa.Integer, sa.ForeignKey("inbox_reviewers.id")),
        sa.Column("claimed_at", UTCDateTime),
        sa.Column("claim_expires_at", UTCDateTime),
        sa.Column("resolved_by", sa.Integer, sa.ForeignKey("inbox_reviewers.id")),
        sa.Column("resolved_at", UTCDateTime),
        sa.Column("reviewed_result", sa.JSON),
        sa.Column("review_seconds", sa.Float),
        sa.Column("result_written_at", UTCDateTime),
    )
    for column in ("state", "schema_name", "tenant", "priority_rank", "created_at"):
        op.create_index(f"ix_inbox_items_{column}", "inbox_items", [column])
    op.create_table(
        "inbox_item_fields",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("item_id", sa.Integer, sa.ForeignKey("inbox_items.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("path", sa.String(500), nullable=False),
        sa.Column("template", sa.String(500), nullable=False),
        sa.Column("field_kind", sa.String(32)),
        sa.Column("flagged", sa.Boolean, nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("confidence", sa.Float),
        sa.Column("machine_value", sa.JSON),
        sa.Column("reviewed_value", sa.JSON),
        sa.Column("outcome", sa.String(16)),
        sa.UniqueConstraint("item_id", "path"),
    )
    op.create_index("ix_inbox_item_fields_item_id", "inbox_item_fields", ["item_id"])
    op.create_index("ix_inbox_item_fields_template", "inbox_item_fields", ["template"])


def downgrade() -> None:
    op.drop_table("inbox_item_fields")
    op.drop_table("inbox_items")
    op.drop_table("inbox_sessions")
    op.drop_table("inbox_reviewers")
