"""Schema steps of the outbox table, which every writing service has: each service's
migration of that step calls them, so the five stay alike. A step never changes once
released; a new one is a new function here and a new revision in each service."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


def add_partition() -> None:
    """``outbox.partition`` and its index (decision 0029): each event's consumer
    partition, so a watermark names each partition's newest event. Rows written before
    stay NULL; the relay gives the unsent ones theirs when it starts."""
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("partition", sa.SmallInteger(), nullable=True))
        batch.create_index("ix_outbox_partition_id", ["partition", "id"], unique=False)


def drop_partition() -> None:
    """Undoes ``add_partition``."""
    with op.batch_alter_table("outbox") as batch:
        batch.drop_index("ix_outbox_partition_id")
        batch.drop_column("partition")
