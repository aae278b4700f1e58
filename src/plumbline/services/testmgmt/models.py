"""testmgmt's tables.

Plans, cycles and runs are abstract items of one table, ``records``: they share the
system members, the lock and the fields map, and one table gives one read by id, one
search for ``/abstractitems`` and one lock. The columns that belong to one kind are
null for the others.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

from plumbline.common.db import ID
from plumbline.common.outbox import outbox_table

metadata = MetaData()

records = Table(
    "records",
    metadata,
    # Ids come from the abstract-item id blocks the items service hands out.
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", String(8), nullable=False),  # plan, cycle or run
    Column("project", BigInteger, nullable=False),
    Column("item_type", BigInteger, nullable=False),
    Column("document_key", String(64), nullable=False),
    # The document key in natural order (its number zero-padded): runs sort by it.
    Column("key_sort", String(96), nullable=False, default=""),
    Column("global_id", String(255), nullable=False),
    # fields.name, kept beside the map for sorting by name
    Column("name", String(255), nullable=False, default=""),
    Column("fields_json", Text, nullable=False, default="{}"),
    # cycles and runs: their plan; runs: their cycle, test case and place in the plan
    Column("plan", BigInteger, nullable=True),
    Column("cycle", BigInteger, nullable=True),
    Column("test_case", BigInteger, nullable=True),
    Column("test_group", BigInteger, nullable=True),
    Column("sort_order", Integer, nullable=True),
    Column("test_case_version", Integer, nullable=True),
    # runs: testRunStatus, kept as a column for searches and generation filters
    Column("status", String(16), nullable=True),
    # plans
    Column("archived", Boolean, nullable=False, default=False),
    # cycles: testRunGenerationConfig as JSON
    Column("generation_json", Text, nullable=True),
    Column("locked", Boolean, nullable=False, default=False),
    Column("locked_by", BigInteger, nullable=True),
    Column("last_locked_at", DateTime(timezone=True), nullable=True),
    Column("version", Integer, nullable=False, default=1),
    Column("created_by", BigInteger, nullable=False),
    Column("modified_by", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("modified_at", DateTime(timezone=True), nullable=False),
    Column("last_activity_at", DateTime(timezone=True), nullable=False),
    Index("ix_records_project_kind", "project", "kind", "id"),
    Index("ix_records_plan_kind", "plan", "kind", "id"),
    Index("ix_records_cycle_key", "cycle", "key_sort", "id"),
    Index("ix_records_test_case", "test_case"),
    Index("ix_records_document_key", "document_key"),
)

test_groups = Table(
    "test_groups",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("plan", BigInteger, ForeignKey("records.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(255), nullable=False),
    Column("assigned_to", BigInteger, nullable=True),
    Column("sort_order", Integer, nullable=False),
    Index("ix_test_groups_plan", "plan", "sort_order"),
)

group_cases = Table(
    "group_cases",
    metadata,
    Column(
        "test_group",
        BigInteger,
        ForeignKey("test_groups.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("test_case", BigInteger, primary_key=True),
    Column("sort_order", Integer, nullable=False),
    Index("ix_group_cases_order", "test_group", "sort_order"),
    Index("ix_group_cases_test_case", "test_case"),
)

# JUnit ingests and bulk updates answered once per Idempotency-Key.
ingests = Table(
    "ingests",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("cycle", BigInteger, nullable=False),
    Column("answer_json", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # SHA-256 of the report, hex; null for ingests stored before it was kept.
    Column("digest", String(64), nullable=True),
)

outbox = outbox_table(metadata)
