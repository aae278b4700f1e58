"""project permissions and the project tree they apply through

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "permissions",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("project", sa.BigInteger(), nullable=False),
        sa.Column("user_id", ID, nullable=True),
        sa.Column("group_id", ID, nullable=True),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["group_id"], ["groups.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("project", "user_id", name="uq_permissions_project_user"),
        sa.UniqueConstraint("project", "group_id", name="uq_permissions_project_group"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_permissions_project", "permissions", ["project"])
    op.create_index("ix_permissions_user_id", "permissions", ["user_id"])
    op.create_index("ix_permissions_group_id", "permissions", ["group_id"])
    op.create_table(
        "project_tree",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("parent", sa.BigInteger(), nullable=True),
        sa.Column("is_folder", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_project_tree_parent", "project_tree", ["parent"])


def downgrade() -> None:
    op.drop_table("project_tree")
    op.drop_table("permissions")
