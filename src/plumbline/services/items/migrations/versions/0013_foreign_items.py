"""foreign_items: abstract items of other services that relationships name

Revision ID: 0013_foreign_items
Revises: 0012_relationship_visible
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_foreign_items"
down_revision = "0012_relationship_visible"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "foreign_items",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("project", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_foreign_items_project", "foreign_items", ["project"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_foreign_items_project", table_name="foreign_items")
    op.drop_table("foreign_items")
