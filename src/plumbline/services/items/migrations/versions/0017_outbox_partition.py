"""outbox.partition (``common.outbox_migrations.add_partition``)

Revision ID: 0017_outbox_partition
Revises: 0016_project_relationship_counts
"""

from __future__ import annotations

from plumbline.common.outbox_migrations import add_partition as upgrade
from plumbline.common.outbox_migrations import drop_partition as downgrade

revision = "0017_outbox_partition"
down_revision = "0016_project_relationship_counts"
branch_labels = None
depends_on = None

__all__ = ["downgrade", "upgrade"]
