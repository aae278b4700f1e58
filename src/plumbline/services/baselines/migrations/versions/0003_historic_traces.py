"""versions.item_type, versions.test_case, histories.deleted_at: traces as they were

Revision ID: 0003t
Revises: 0002l

Historic traces (``services/baselines/tracing.py``) find a project's items of a type at a
moment, a test case's runs then, and whether an item was deleted by then. The two
columns of ``versions`` are read from each version's snapshot, here for the versions
recorded before them; a deleted history's ``deleted_at`` is, for those deleted before
it, its newest version's time (the earliest the deletion can have been).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from plumbline.services.baselines.indexed import indexed_columns

revision = "0003t"
down_revision = "0002l"
branch_labels = None
depends_on = None

#: Versions read and updated at a time while filling the new columns.
_BATCH = 2_000


def upgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        batch.add_column(sa.Column("item_type", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("test_case", sa.BigInteger(), nullable=True))
        batch.create_index(
            "ix_versions_project_type", ["project", "item_type", "created_at"], unique=False
        )
        batch.create_index("ix_versions_test_case", ["test_case", "created_at"], unique=False)
    with op.batch_alter_table("histories") as batch:
        batch.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
    bind = op.get_bind()
    versions = sa.table(
        "versions",
        sa.column("id", sa.BigInteger()),
        sa.column("item", sa.BigInteger()),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("record_type", sa.String()),
        sa.column("snapshot", sa.Text()),
        sa.column("item_type", sa.BigInteger()),
        sa.column("test_case", sa.BigInteger()),
    )
    histories = sa.table(
        "histories",
        sa.column("item", sa.BigInteger()),
        sa.column("deleted", sa.Boolean()),
        sa.column("deleted_at", sa.DateTime(timezone=True)),
    )
    after = 0
    while True:
        rows = bind.execute(
            sa.select(versions.c.id, versions.c.record_type, versions.c.snapshot)
            .where(versions.c.id > after)
            .order_by(versions.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        after = rows[-1].id
        filled = [
            {"b_id": r.id, "b_item_type": item_type, "b_test_case": test_case}
            for r in rows
            for item_type, test_case in [indexed_columns(r.record_type, r.snapshot)]
            if item_type is not None or test_case is not None
        ]
        if filled:
            bind.execute(
                versions.update()
                .where(versions.c.id == sa.bindparam("b_id"))
                .values(item_type=sa.bindparam("b_item_type"), test_case=sa.bindparam("b_test_case")),
                filled,
            )
    newest = (
        sa.select(sa.func.max(versions.c.created_at))
        .where(versions.c.item == histories.c.item)
        .scalar_subquery()
    )
    bind.execute(
        histories.update().where(histories.c.deleted.is_(True)).values(deleted_at=newest)
    )


def downgrade() -> None:
    with op.batch_alter_table("histories") as batch:
        batch.drop_column("deleted_at")
    with op.batch_alter_table("versions") as batch:
        batch.drop_index("ix_versions_test_case")
        batch.drop_index("ix_versions_project_type")
        batch.drop_column("test_case")
        batch.drop_column("item_type")
