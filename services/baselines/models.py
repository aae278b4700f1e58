"""baselines' tables."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from plumbline.common.db import ID
from plumbline.common.inbox import inbox_tables

metadata = MetaData()

#: One row per version of an abstract item: who made it, when, and the record then.
versions = Table(
    "versions",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("item", BigInteger, nullable=False),
    Column("version", Integer, nullable=False),
    Column("project", BigInteger, nullable=False),
    Column("record_type", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("created_by", BigInteger, nullable=True),
    Column("comment", Text, nullable=False, default=""),
    # The names of the fields that differ from the version before, comma-separated;
    # filled in when both versions are here, whichever arrived first.
    Column("changed", Text, nullable=True),
    Column("snapshot", Text, nullable=False),
    UniqueConstraint("item", "version", name="uq_versions_item_version"),
    Index("ix_versions_item_created", "item", "created_at"),
)

#: One row per abstract item with a history: its newest version, and whether it is
#: deleted (then it has no current version).
histories = Table(
    "histories",
    metadata,
    Column("item", BigInteger, primary_key=True, autoincrement=False),
    Column("project", BigInteger, nullable=False),
    Column("latest", Integer, nullable=False),
    Column("deleted", Boolean, nullable=False, default=False),
)

#: Each relationship over the time it existed (``valid_to`` null: it still does).
relationship_spans = Table(
    "relationship_spans",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("relationship", BigInteger, nullable=False),
    Column("project", BigInteger, nullable=False),
    Column("from_item", BigInteger, nullable=False),
    Column("to_item", BigInteger, nullable=False),
    Column("relationship_type", BigInteger, nullable=True),
    Column("suspect", Boolean, nullable=False, default=False),
    Column("valid_from", DateTime(timezone=True), nullable=False),
    Column("valid_to", DateTime(timezone=True), nullable=True),
    Index("ix_relationship_spans_from", "from_item", "valid_from"),
    Index("ix_relationship_spans_to", "to_item", "valid_from"),
    Index("ix_relationship_spans_relationship", "relationship", "valid_from"),
)

consumed_events, consumer_positions = inbox_tables(metadata)
