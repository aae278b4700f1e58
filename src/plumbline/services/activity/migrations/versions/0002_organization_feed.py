"""the organisation feed: identity's changes leave the project feeds

Revision ID: 0002o
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002o"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("activities") as batch:
        batch.add_column(
            sa.Column("organization", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.create_index("ix_activities_organization_id", ["organization", "id"])
    # Until now only identity wrote USER activities (users and groups).
    op.execute(
        sa.text("UPDATE activities SET organization = :yes WHERE object_type = 'USER'").bindparams(
            yes=True
        )
    )


def downgrade() -> None:
    with op.batch_alter_table("activities") as batch:
        batch.drop_index("ix_activities_organization_id")
        batch.drop_column("organization")
