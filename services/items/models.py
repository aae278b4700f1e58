"""items' tables."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, DateTime, Integer, MetaData, String, Table, Text

from plumbline.common.db import ID
from plumbline.common.outbox import outbox_table

metadata = MetaData()

projects = Table(
    "projects",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("project_key", String(64), nullable=True, unique=True),
    Column("parent", BigInteger, nullable=True, index=True),
    Column("is_folder", Boolean, nullable=False, default=False),
    Column("name", String(255), nullable=False),
    Column("fields_json", Text, nullable=False, default="{}"),
    Column("version", Integer, nullable=False, default=1),
    Column("created_by", BigInteger, nullable=False),
    Column("modified_by", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("modified_at", DateTime(timezone=True), nullable=False),
)

# One row per handed-out block of abstract-item ids: block n holds ids
# n*BLOCK_SIZE+1 .. (n+1)*BLOCK_SIZE.
id_blocks = Table(
    "id_blocks",
    metadata,
    Column("block", ID, primary_key=True, autoincrement=False),
    Column("owner", String(64), nullable=False),
    Column("allocated_at", DateTime(timezone=True), nullable=False),
)

outbox = outbox_table(metadata)
