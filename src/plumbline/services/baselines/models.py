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
from plumbline.common.leases import lease_tables
from plumbline.common.outbox import outbox_table

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
    # The ids of the categories applied at this version (items only), JSON.
    Column("categories", Text, nullable=True),
    # Read from the snapshot, for historic traces: an item's type, a test run's test case.
    Column("item_type", BigInteger, nullable=True),
    Column("test_case", BigInteger, nullable=True),
    UniqueConstraint("item", "version", name="uq_versions_item_version"),
    Index("ix_versions_item_created", "item", "created_at"),
    Index("ix_versions_project_type", "project", "item_type", "created_at"),
    Index("ix_versions_test_case", "test_case", "created_at"),
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
    # When it was deleted (kept while ``deleted``; from before this column: its newest
    # version's time, the earliest it can have been deleted).
    Column("deleted_at", DateTime(timezone=True), nullable=True),
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

#: A baseline: a named set of item versions of one project, and where they came from.
baselines = Table(
    "baselines",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("project", BigInteger, nullable=False),
    Column("name", String(255), nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("created_by", BigInteger, nullable=True),
    Column("origin_item", BigInteger, nullable=True),
    Column("origin_filter", BigInteger, nullable=True),
    Column("origin_release", BigInteger, nullable=True),
    Column("folder", BigInteger, nullable=True),
    Index("ix_baselines_project_id", "project", "id"),
)

#: Folders that organise a project's baselines (a tree).
baseline_folders = Table(
    "baseline_folders",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("project", BigInteger, nullable=False),
    Column("name", String(255), nullable=False),
    Column("parent", BigInteger, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("created_by", BigInteger, nullable=True),
    UniqueConstraint("project", "parent", "name", name="uq_baseline_folders_name"),
    Index("ix_baseline_folders_project", "project", "id"),
)

#: The items of a baseline: the version each had and where it was when it was taken
#: (versions and places, not copies of the records: those are in ``versions``).
baseline_items = Table(
    "baseline_items",
    metadata,
    Column("baseline", BigInteger, primary_key=True, autoincrement=False),
    Column("item", BigInteger, primary_key=True, autoincrement=False),
    Column("version", Integer, nullable=False),
    #: Tree order within the baseline.
    Column("position", Integer, nullable=False),
    Column("sequence", String(255), nullable=False),
    Column("parent_item", BigInteger, nullable=True),
    Column("parent_version", Integer, nullable=False, default=0),
    Index("ix_baseline_items_position", "baseline", "position"),
)

#: The owners whose records without history have been recorded (once, at first start).
backfills = Table(
    "backfills",
    metadata,
    Column("owner", String(32), primary_key=True),
    Column("finished_at", DateTime(timezone=True), nullable=False),
)

consumed_events, consumer_positions = inbox_tables(metadata)
consumer_leases, consumer_members = lease_tables(metadata)
outbox = outbox_table(metadata)
