"""item_type_fields.deleted: a custom field deleted through the API keeps its row, so
that its name is not taken again while records still hold its values

Revision ID: 0014_field_deleted
Revises: 0013_foreign_items
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_field_deleted"
down_revision = "0013_foreign_items"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "item_type_fields",
        sa.Column("deleted", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    with op.batch_alter_table("item_type_fields") as batch:
        batch.drop_column("deleted")
