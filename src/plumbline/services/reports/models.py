"""reports' tables."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

#: A report asked for: its parameters, where its making stands, and what it made.
works = Table(
    "works",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("report", String(64), nullable=False),
    Column("project", BigInteger, nullable=False),
    Column("owner", BigInteger, nullable=False),
    Column("format", String(8), nullable=False),
    Column("parameters_json", Text, nullable=False),
    # QUEUED, RUNNING, DONE or FAILED.
    Column("status", String(16), nullable=False),
    Column("progress", Integer, nullable=False, default=0),
    Column("message", Text, nullable=False, default=""),
    Column("attempts", Integer, nullable=False, default=0),
    # The replica making it, and when it last said so: a work whose maker went silent
    # is queued again.
    Column("claimed_by", String(64), nullable=True),
    Column("heartbeat_at", DateTime(timezone=True), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    # When its data was read: from the first read to the last.
    Column("data_from", DateTime(timezone=True), nullable=True),
    Column("data_to", DateTime(timezone=True), nullable=True),
    Column("file_name", String(255), nullable=True),
    Column("media_type", String(128), nullable=True),
    Column("size", BigInteger, nullable=True),
    Index("ix_works_status", "status", "created_at"),
    Index("ix_works_owner", "owner", "created_at"),
)

#: A finished work's file, in chunks (written and read a chunk at a time).
work_chunks = Table(
    "work_chunks",
    metadata,
    Column("work", String(36), ForeignKey("works.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("data", LargeBinary, nullable=False),
)

#: What a work takes in (a ReqIF import's document), in chunks; gone once it is made.
work_inputs = Table(
    "work_inputs",
    metadata,
    Column("work", String(36), ForeignKey("works.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("data", LargeBinary, nullable=False),
)
