"""hooks' tables."""

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
    false,
)

from plumbline.common.db import ID
from plumbline.common.inbox import inbox_tables
from plumbline.common.leases import lease_tables

metadata = MetaData()

#: The change feed: every change a person would read about, in the order recorded (the
#: id is the feed's cursor), kept for the retention period.
changes = Table(
    "changes",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("event_id", String(36), nullable=False, unique=True),
    Column("type", String(96), nullable=False),
    Column("time", DateTime(timezone=True), nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    Column("project", BigInteger, nullable=True),
    # Another project the change names a record of (a relationship's to-item's): who
    # may not read it does not see the change.
    Column("related_project", BigInteger, nullable=True),
    # identity's changes: organisation administrators only.
    Column("organization", Boolean, nullable=False, default=False, server_default=false()),
    Column("actor", BigInteger, nullable=True),
    Column("event_type", String(16), nullable=False),
    Column("object_type", String(32), nullable=False),
    Column("object_id", BigInteger, nullable=True),
    Column("version", BigInteger, nullable=False),
    Column("item", BigInteger, nullable=True),
    Column("item_type", BigInteger, nullable=True),
    Column("details", Text, nullable=False),
    Index("ix_changes_recorded_at", "recorded_at"),
)

#: One row: writers of the feed take turns on it, so cursors become visible in order (a
#: reader never sees cursor 11 and later 10); and how far retention has pruned.
feed_head = Table(
    "feed_head",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("writes", BigInteger, nullable=False),
    Column("pruned_through", BigInteger, nullable=False),
)

consumed_events, consumer_positions = inbox_tables(metadata)
consumer_leases, consumer_members = lease_tables(metadata)
