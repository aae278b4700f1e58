"""initial: works and their files

Revision ID: 0001r
Revises:
Create Date: 2026-11-27 14:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0001r'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('works',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('report', sa.String(length=64), nullable=False),
    sa.Column('project', sa.BigInteger(), nullable=False),
    sa.Column('owner', sa.BigInteger(), nullable=False),
    sa.Column('format', sa.String(length=8), nullable=False),
    sa.Column('parameters_json', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('progress', sa.Integer(), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('claimed_by', sa.String(length=64), nullable=True),
    sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('data_from', sa.DateTime(timezone=True), nullable=True),
    sa.Column('data_to', sa.DateTime(timezone=True), nullable=True),
    sa.Column('file_name', sa.String(length=255), nullable=True),
    sa.Column('media_type', sa.String(length=128), nullable=True),
    sa.Column('size', sa.BigInteger(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('works', schema=None) as batch_op:
        batch_op.create_index('ix_works_owner', ['owner', 'created_at'], unique=False)
        batch_op.create_index('ix_works_status', ['status', 'created_at'], unique=False)

    op.create_table('work_chunks',
    sa.Column('work', sa.String(length=36), nullable=False),
    sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('data', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['work'], ['works.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('work', 'seq')
    )


def downgrade() -> None:
    op.drop_table('work_chunks')
    with op.batch_alter_table('works', schema=None) as batch_op:
        batch_op.drop_index('ix_works_status')
        batch_op.drop_index('ix_works_owner')

    op.drop_table('works')
