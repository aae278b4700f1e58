"""project_activities: each project's feed keeps its total

Revision ID: 0007t
Revises: 0006l

A first page of a project's feed answered ``totalResults`` by counting the project's
activities, which grows with its history (a million items, a million activities and
more). The total is now kept with every insert; this fills it from the activities
recorded before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007t"
down_revision = "0006l"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "project_activities",
        sa.Column("project", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("total", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("project"),
    )
    op.execute(
        "INSERT INTO project_activities (project, total) "
        "SELECT project, count(*) FROM activities "
        "WHERE project IS NOT NULL AND organization = false GROUP BY project"
    )


def downgrade() -> None:
    op.drop_table("project_activities")
