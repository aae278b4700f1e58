"""activity's tables."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Index,
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

activities = Table(
    "activities",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("event_id", String(36), nullable=False, unique=True),
    Column("date", DateTime(timezone=True), nullable=False),
    Column("details", Text, nullable=False, default=""),
    Column("action", String(64), nullable=False),
    Column("user_id", BigInteger, nullable=True),
    Column("user_comment", Text, nullable=False, default=""),
    Column("item", BigInteger, nullable=True),
    Column("item_type", BigInteger, nullable=True),
    Column("event_type", String(32), nullable=False),
    Column("object_type", String(32), nullable=False),
    Column("project", BigInteger, nullable=True),
    # identity's changes (users, groups, permissions, credentials, settings): the
    # organisation feed, which administrators read, and no project's.
    Column("organization", Boolean, nullable=False, default=False, server_default=false()),
    # An item deletion: the ids of the items deleted with the item (a JSON array), which
    # are among its affected items and come back with it.
    Column("subtree", Text, nullable=True),
    # An item deletion's restore: "pending" while one runs (claimed at ``restored_at``),
    # "done" after; NULL before any. Only one restore of an activity can claim it.
    Column("restore_state", String(16), nullable=True),
    Column("restored_at", DateTime(timezone=True), nullable=True),
    # Another project the activity names a record of (a relationship's to-item's, where
    # that is not ``project``): reading the activity needs READ there too.
    Column("related_project", BigInteger, nullable=True),
    Index("ix_activities_project_id", "project", "id"),
    Index("ix_activities_organization_id", "organization", "id"),
    # The activities of one test plan or run (``/testplans/{id}/activities``).
    Index("ix_activities_item_id", "item", "id"),
)

# How many activities each project's feed holds (not the organisation's): kept with
# every insert, so a first page of the feed does not count a project's history.
project_activities = Table(
    "project_activities",
    metadata,
    Column("project", BigInteger, primary_key=True, autoincrement=False),
    Column("total", BigInteger, nullable=False),
)

consumed_events, consumer_positions = inbox_tables(metadata)
consumer_leases, consumer_members = lease_tables(metadata)
