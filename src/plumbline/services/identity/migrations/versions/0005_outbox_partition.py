"""outbox.partition (``common.outbox_migrations.add_partition``)

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from plumbline.common.outbox_migrations import add_partition as upgrade
from plumbline.common.outbox_migrations import drop_partition as downgrade

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

__all__ = ["downgrade", "upgrade"]
