"""outbox.partition (``common.outbox_migrations.add_partition``)

Revision ID: 0003p
Revises: 0002d
"""

from __future__ import annotations

from plumbline.common.outbox_migrations import add_partition as upgrade
from plumbline.common.outbox_migrations import drop_partition as downgrade

revision = "0003p"
down_revision = "0002d"
branch_labels = None
depends_on = None

__all__ = ["downgrade", "upgrade"]
