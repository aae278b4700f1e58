"""related_project: a relationship's activity is shown only to who may read both ends

Revision ID: 0005x
Revises: 0004r

Relationship activities recorded before get the project of their to-item where the
feed knows it: the newest activity about that item (its creation, at least, for items,
test plans, cycles and manual runs) says which project it was in. An activity whose
to-item the feed has no activity about keeps none, and is shown as before.
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "0005x"
down_revision = "0004r"
branch_labels = None
depends_on = None

#: How a relationship's activity names its ends ("relationship 12 to 34 created").
_DETAILS = re.compile(r"^relationship (\d+) to (\d+)\b")
#: Object types whose activities name an abstract item of their project in ``item``.
_RECORDS = ("ITEM", "TEST_PLAN", "TEST_CYCLE", "TEST_RUN", "TEST_RESULT", "ITEM_ATTACHMENT")
_BATCH = 500


def upgrade() -> None:
    with op.batch_alter_table("activities") as batch:
        batch.add_column(sa.Column("related_project", sa.BigInteger(), nullable=True))
    connection = op.get_bind()
    activities = sa.table(
        "activities",
        sa.column("id", sa.BigInteger),
        sa.column("project", sa.BigInteger),
        sa.column("details", sa.Text),
        sa.column("item", sa.BigInteger),
        sa.column("object_type", sa.String),
        sa.column("related_project", sa.BigInteger),
    )
    c = activities.c
    ends: dict[int, tuple[int | None, int]] = {}  # activity -> (its project, to-item)
    for row in connection.execute(
        sa.select(c.id, c.project, c.details).where(c.object_type == "RELATIONSHIP")
    ):
        match = _DETAILS.match(row.details or "")
        if match:
            ends[row.id] = (row.project, int(match.group(2)))
    wanted = sorted({item for _, item in ends.values()})
    project_of: dict[int, int] = {}
    for start in range(0, len(wanted), _BATCH):
        for item, project in connection.execute(
            sa.select(c.item, c.project)
            .where(
                c.item.in_(wanted[start : start + _BATCH]),
                c.object_type.in_(_RECORDS),
                c.project.is_not(None),
            )
            .order_by(c.id)
        ):
            project_of[item] = project  # the newest activity's project wins
    for activity, (project, item) in ends.items():
        other = project_of.get(item)
        if other is not None and other != project:
            connection.execute(
                sa.update(activities).where(c.id == activity).values(related_project=other)
            )


def downgrade() -> None:
    with op.batch_alter_table("activities") as batch:
        batch.drop_column("related_project")
