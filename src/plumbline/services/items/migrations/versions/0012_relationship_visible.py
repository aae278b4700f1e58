"""relationships.visible: both ends active, so listings and counts read no items

Revision ID: 0012_relationship_visible
Revises: 0011_contains_index
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_relationship_visible"
down_revision = "0011_contains_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "relationships",
        sa.Column("visible", sa.Boolean(), nullable=False, server_default=sa.true()),
    )
    op.execute(
        "UPDATE relationships SET visible = false WHERE from_item IN "
        "(SELECT id FROM items WHERE NOT active) OR to_item IN "
        "(SELECT id FROM items WHERE NOT active)"
    )
    op.drop_index("ix_relationships_project", table_name="relationships")
    op.create_index(
        "ix_relationships_project", "relationships", ["project", "visible", "id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_relationships_project", table_name="relationships")
    op.create_index("ix_relationships_project", "relationships", ["project", "id"], unique=False)
    # (SQLite rebuilds the table; keep it AUTOINCREMENT as 0010 made it.)
    with op.batch_alter_table(
        "relationships", table_kwargs={"sqlite_autoincrement": True}
    ) as batch:
        batch.drop_column("visible")
