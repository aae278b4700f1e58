"""revocable API credentials and the CORS origins

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("api_clients") as batch:
        batch.add_column(sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_index("ix_api_clients_revoked_at", ["revoked_at"])
    op.create_table(
        "cors_domains",
        sa.Column("origin", sa.String(length=255), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("origin"),
    )


def downgrade() -> None:
    op.drop_table("cors_domains")
    with op.batch_alter_table("api_clients") as batch:
        batch.drop_index("ix_api_clients_revoked_at")
        batch.drop_column("revoked_at")
