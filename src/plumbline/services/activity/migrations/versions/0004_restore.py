"""restore of item deletions: the subtree a deletion took along, and the restore's state

Revision ID: 0004r
Revises: 0003i
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004r"
down_revision = "0003i"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("activities") as batch:
        batch.add_column(sa.Column("subtree", sa.Text(), nullable=True))
        batch.add_column(sa.Column("restore_state", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("restored_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("activities") as batch:
        batch.drop_column("restored_at")
        batch.drop_column("restore_state")
        batch.drop_column("subtree")
