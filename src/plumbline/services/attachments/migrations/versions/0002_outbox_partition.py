"""outbox.partition (``common.outbox_migrations.add_partition``)

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from plumbline.common.outbox_migrations import add_partition as upgrade
from plumbline.common.outbox_migrations import drop_partition as downgrade

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

__all__ = ["downgrade", "upgrade"]
