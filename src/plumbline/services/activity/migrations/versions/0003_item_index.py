"""ix_activities_item_id: the activities of one test plan or run

Revision ID: 0003i
Revises: 0002o
"""

from __future__ import annotations

from alembic import op

revision = "0003i"
down_revision = "0002o"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_activities_item_id", "activities", ["item", "id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_activities_item_id", table_name="activities")
