"""consumer_leases, consumer_members: replicas of the history share its partitions

Revision ID: 0002l
Revises: 0001

Replicas of the history's consumers share its partitions of the events, each partition held by one
replica at a time under a lease (``plumbline.common.leases``), which also says how far
behind its holder last reported it to be.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002l"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "consumer_leases",
        sa.Column("consumer", sa.String(64), nullable=False),
        sa.Column("partition", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("holder", sa.String(96), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("behind_events", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("behind_seconds", sa.Float(), nullable=False, server_default="0"),
        sa.Column("reported_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("consumer", "partition"),
    )
    op.create_table(
        "consumer_members",
        sa.Column("consumer", sa.String(64), nullable=False),
        sa.Column("holder", sa.String(96), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("consumer", "holder"),
    )


def downgrade() -> None:
    op.drop_table("consumer_members")
    op.drop_table("consumer_leases")
