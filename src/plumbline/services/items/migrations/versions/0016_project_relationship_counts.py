"""projects.visible_relationships: each project's count of visible relationships (those
starting at its items whose two ends are active), kept by every write that adds,
deletes, hides, shows or moves relationships, so that GET /relationships?project= reads
one row for totalResults instead of counting the project's relationships

Revision ID: 0016_project_relationship_counts
Revises: 0015_project_item_counts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_project_relationship_counts"
down_revision = "0015_project_item_counts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "projects",
        sa.Column("visible_relationships", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.execute(
        "UPDATE projects SET visible_relationships = (SELECT count(*) FROM relationships "
        "WHERE relationships.project = projects.id AND relationships.visible)"
    )


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("visible_relationships")
