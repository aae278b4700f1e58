"""webhooks: subscriptions, the delivery log, redeliveries asked for

Revision ID: 0002h
Revises: 0001h
Create Date: 2026-11-27 10:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002h"
down_revision = "0001h"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("owner", sa.BigInteger(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("include_object", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("object_types", sa.Text(), nullable=False),
        sa.Column("event_types", sa.Text(), nullable=False),
        sa.Column("projects", sa.Text(), nullable=False),
        sa.Column("item_types", sa.Text(), nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("previous_secret", sa.Text(), nullable=True),
        sa.Column("previous_expires", sa.DateTime(timezone=True), nullable=True),
        sa.Column("delivered_through", sa.BigInteger(), nullable=False),
        sa.Column("failing_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt", sa.DateTime(timezone=True), nullable=True),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("modified", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_webhooks_owner", "webhooks", ["owner"], unique=False)
    op.create_table(
        "deliveries",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("webhook", sa.BigInteger(), nullable=False),
        sa.Column("cursor", sa.BigInteger(), nullable=False),
        sa.Column("event_id", sa.String(length=36), nullable=False),
        sa.Column("type", sa.String(length=96), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("redelivery", sa.Boolean(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("response_code", sa.Integer(), nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["webhook"], ["webhooks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_deliveries_webhook", "deliveries", ["webhook", "id"], unique=False)
    op.create_index("ix_deliveries_at", "deliveries", ["at"], unique=False)
    op.create_table(
        "redeliveries",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("webhook", sa.BigInteger(), nullable=False),
        sa.Column("cursor", sa.BigInteger(), nullable=False),
        sa.Column("asked", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["webhook"], ["webhooks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_redeliveries_webhook", "redeliveries", ["webhook", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_redeliveries_webhook", table_name="redeliveries")
    op.drop_table("redeliveries")
    op.drop_index("ix_deliveries_at", table_name="deliveries")
    op.drop_index("ix_deliveries_webhook", table_name="deliveries")
    op.drop_table("deliveries")
    op.drop_index("ix_webhooks_owner", table_name="webhooks")
    op.drop_table("webhooks")
