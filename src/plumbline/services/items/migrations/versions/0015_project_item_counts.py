"""projects.active_items: each project's count of active items, kept by every write that
adds, deletes, restores or moves items, so that a list's totalResults is one row's read
instead of a count over the project; projects.tree_changes: how many transactions have
taken the project's tree lock, so that where recent pages began stays known until the
tree changes

Revision ID: 0015_project_item_counts
Revises: 0014_field_deleted
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015_project_item_counts"
down_revision = "0014_field_deleted"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "projects",
        sa.Column("active_items", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.add_column(
        "projects",
        sa.Column("tree_changes", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.execute(
        "UPDATE projects SET active_items = (SELECT count(*) FROM items "
        "WHERE items.project = projects.id AND items.active)"
    )


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("active_items")
        batch.drop_column("tree_changes")
