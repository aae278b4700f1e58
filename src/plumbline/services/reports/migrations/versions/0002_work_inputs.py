"""work inputs: a ReqIF import's document, kept until its work is made

Revision ID: 0002r
Revises: 0001r
Create Date: 2026-11-27 22:45:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002r"
down_revision = "0001r"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "work_inputs",
        sa.Column("work", sa.String(length=36), nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["work"], ["works.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("work", "seq"),
    )


def downgrade() -> None:
    op.drop_table("work_inputs")
