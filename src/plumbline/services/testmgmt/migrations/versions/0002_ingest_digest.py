"""the digest of the report an idempotency key was used for

Revision ID: 0002d
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002d"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("ingests") as batch:
        batch.add_column(sa.Column("digest", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ingests") as batch:
        batch.drop_column("digest")
