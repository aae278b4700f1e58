"""items' tables."""

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
    UniqueConstraint,
    false,
    true,
)

from plumbline.common.db import ID
from plumbline.common.migrations import UNDECLARED
from plumbline.common.outbox import outbox_table

metadata = MetaData(
    info={
        # Migration 0011 creates these with raw DDL: the FTS5 table behind ``contains`` on
        # SQLite and the shadow tables FTS5 keeps.
        UNDECLARED: frozenset(
            (
                "items_fts",
                "items_fts_config",
                "items_fts_data",
                "items_fts_docsize",
                "items_fts_idx",
            )
        )
    }
)

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
    # The project's active items, kept by each write that adds, deletes, restores or
    # moves items (``tree.lock_project``'s ``added``, ``tree.count_items``).
    Column("active_items", BigInteger, nullable=False, default=0, server_default="0"),
    # Transactions that took the project's tree lock (``tree.lock_project``): while it
    # stands, the project's order and active items are as they were (``Positions``).
    Column("tree_changes", BigInteger, nullable=False, default=0, server_default="0"),
    # The visible relationships starting at the project's items, kept by each write that
    # adds, deletes, hides, shows or moves them (``tree.count_relationships``).
    Column("visible_relationships", BigInteger, nullable=False, default=0, server_default="0"),
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

item_types = Table(
    "item_types",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("type_key", String(32), nullable=False, unique=True),
    Column("display", String(255), nullable=False),
    Column("display_plural", String(255), nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("image", String(255), nullable=False, default=""),
    Column("category", String(32), nullable=False),
    Column("widgets", Text, nullable=False, default="[]"),
    Column("system", Boolean, nullable=False, default=False),
)

item_type_fields = Table(
    "item_type_fields",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("item_type", ID, ForeignKey("item_types.id"), nullable=False, index=True),
    Column("name", String(128), nullable=False),
    Column("label", String(255), nullable=False),
    Column("field_type", String(32), nullable=False),
    Column("read_only", Boolean, nullable=False, default=False),
    Column("required", Boolean, nullable=False, default=False),
    Column("trigger_suspect", Boolean, nullable=False, default=False),
    Column("synchronize", Boolean, nullable=False, default=False),
    Column("pick_list", ID, ForeignKey("pick_lists.id"), nullable=True),
    Column("text_type", String(32), nullable=False, default=""),
    Column("ref_item_type", BigInteger, nullable=True),
    Column("position", Integer, nullable=False, default=0),
    # Deleted through the API: the row keeps the name, hidden from the catalog.
    Column("deleted", Boolean, nullable=False, default=False, server_default=false()),
    UniqueConstraint("item_type", "name", name="uq_item_type_fields_name"),
)

pick_lists = Table(
    "pick_lists",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("description", Text, nullable=False, default=""),
    Column("kind", String(32), nullable=False, default="STANDARD"),
)

pick_list_options = Table(
    "pick_list_options",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("pick_list", ID, ForeignKey("pick_lists.id"), nullable=False, index=True),
    Column("name", String(255), nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("value", String(255), nullable=False, default=""),
    Column("color", String(32), nullable=False, default=""),
    Column("is_default", Boolean, nullable=False, default=False),
    Column("active", Boolean, nullable=False, default=True),
    Column("sort_order", Integer, nullable=False, default=0),
    UniqueConstraint("pick_list", "name", name="uq_pick_list_options_name"),
)

relationship_types = Table(
    "relationship_types",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("is_default", Boolean, nullable=False, default=False),
)

# Per item type: which status may follow which, and what the step is called.
workflow_transitions = Table(
    "workflow_transitions",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("item_type", ID, ForeignKey("item_types.id"), nullable=False, index=True),
    Column("field", String(128), nullable=False),
    Column("from_option", ID, ForeignKey("pick_list_options.id"), nullable=False),
    Column("to_option", ID, ForeignKey("pick_list_options.id"), nullable=False),
    Column("action", String(255), nullable=False),
    UniqueConstraint("item_type", "from_option", "to_option", name="uq_workflow_step"),
)

# Requirements-tree items. Ids come from the abstract-item id space.
items = Table(
    "items",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("project", BigInteger, nullable=False),
    Column("item_type", BigInteger, nullable=False),
    Column("child_item_type", BigInteger, nullable=True),
    Column("document_key", String(128), nullable=False, unique=True),
    Column("global_id", String(128), nullable=False, index=True),
    Column("parent", BigInteger, nullable=True),
    Column("sort_order", Integer, nullable=False),
    Column("global_sort_order", BigInteger, nullable=False),
    Column("sequence", String(255), nullable=False),
    Column("name", String(255), nullable=False, default=""),
    Column("fields_json", Text, nullable=False, default="{}"),
    # Lower-cased text of the item's string fields, for ``contains`` searches.
    Column("search_text", Text, nullable=False, default="", server_default=""),
    Column("active", Boolean, nullable=False, default=True),
    Column("locked", Boolean, nullable=False, default=False),
    Column("locked_by", BigInteger, nullable=True),
    Column("last_locked_date", DateTime(timezone=True), nullable=True),
    Column("version", Integer, nullable=False, default=1),
    Column("created_by", BigInteger, nullable=False),
    Column("modified_by", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("modified_at", DateTime(timezone=True), nullable=False),
    Column("last_activity_at", DateTime(timezone=True), nullable=False),
    Index("ix_items_tree", "project", "active", "global_sort_order"),
    Index("ix_items_children", "parent", "active", "sort_order"),
    Index("ix_items_root", "project", "parent", "active", "sort_order"),
    Index("ix_items_sequence", "project", "sequence"),
    # ``contains`` on PostgreSQL; SQLite has the FTS5 table ``items_fts`` instead (0011).
    Index(
        "ix_items_search_text_trgm",
        "search_text",
        postgresql_using="gin",
        postgresql_ops={"search_text": "gin_trgm_ops"},
    ).ddl_if(dialect="postgresql"),
)

# Next document-key number per project and item type.
document_key_counters = Table(
    "document_key_counters",
    metadata,
    Column("project", BigInteger, primary_key=True),
    Column("item_type", BigInteger, primary_key=True),
    Column("next_number", Integer, nullable=False),
)

# fromItem is upstream, toItem downstream.
relationships = Table(
    "relationships",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("project", BigInteger, nullable=False),
    Column("from_item", BigInteger, nullable=False, index=True),
    Column("to_item", BigInteger, nullable=False, index=True),
    Column("relationship_type", BigInteger, nullable=False),
    Column("suspect", Boolean, nullable=False, default=False),
    Column("created_by", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("modified_at", DateTime(timezone=True), nullable=False),
    # Both ends active: kept by the item deletes, so listings and counts read no items.
    Column("visible", Boolean, nullable=False, default=True, server_default=true()),
    Index("ix_relationships_project", "project", "visible", "id"),
    UniqueConstraint("from_item", "to_item", "relationship_type", name="uq_relationship"),
    # Never reuse the id of a deleted row (SQLite would, without this).
    sqlite_autoincrement=True,
)

tags = Table(
    "tags",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("project", BigInteger, nullable=False),
    Column("name", String(255), nullable=False),
    UniqueConstraint("project", "name", name="uq_tags_name"),
    # Never reuse the id of a deleted row (SQLite would, without this).
    sqlite_autoincrement=True,
)

#: Abstract items other services own (test plans and runs) that a relationship has named,
#: with the project their owner gave: relationship reads check both ends' projects.
foreign_items = Table(
    "foreign_items",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("project", BigInteger, nullable=False, index=True),
)
item_tags = Table(
    "item_tags",
    metadata,
    Column("item", BigInteger, primary_key=True),
    Column("tag", ID, ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True, index=True),
)

releases = Table(
    "releases",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("project", BigInteger, nullable=False, index=True),
    Column("name", String(255), nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("release_date", DateTime(timezone=True), nullable=True),
    Column("active", Boolean, nullable=False, default=True),
    Column("archived", Boolean, nullable=False, default=False),
)

# Which releases an item's RELEASE fields name (kept in step with the fields).
item_releases = Table(
    "item_releases",
    metadata,
    Column("item", BigInteger, primary_key=True),
    Column("release", ID, ForeignKey("releases.id"), primary_key=True, index=True),
)

comments = Table(
    "comments",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("project", BigInteger, nullable=True, index=True),
    Column("item", BigInteger, nullable=True, index=True),
    Column("in_reply_to", BigInteger, nullable=True, index=True),
    Column("text", Text, nullable=False),
    Column("comment_type", String(32), nullable=False, default="GENERAL"),
    Column("status", String(32), nullable=False, default="OPEN"),
    Column("deleted", Boolean, nullable=False, default=False),
    Column("created_by", BigInteger, nullable=False),
    Column("modified_by", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# URL links attached to an item.
item_links = Table(
    "item_links",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("item", BigInteger, nullable=False, index=True),
    Column("url", String(2048), nullable=False),
    Column("description", Text, nullable=False, default=""),
    # Never reuse the id of a deleted row (SQLite would, without this).
    sqlite_autoincrement=True,
)

rule_sets = Table(
    "relationship_rule_sets",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("description", Text, nullable=False, default=""),
)

rule_set_rules = Table(
    "relationship_rules",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("rule_set", ID, ForeignKey("relationship_rule_sets.id"), nullable=False, index=True),
    Column("relationship_type", ID, ForeignKey("relationship_types.id"), nullable=False),
    Column("from_item_type", ID, ForeignKey("item_types.id"), nullable=False),
    Column("to_item_type", ID, ForeignKey("item_types.id"), nullable=False),
    UniqueConstraint(
        "rule_set", "relationship_type", "from_item_type", "to_item_type", name="uq_rule"
    ),
)

rule_set_projects = Table(
    "relationship_rule_set_projects",
    metadata,
    Column("rule_set", ID, ForeignKey("relationship_rule_sets.id"), primary_key=True),
    Column("project", BigInteger, primary_key=True),
)

filters = Table(
    "filters",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False),
    Column("author", BigInteger, nullable=False),
    Column("project_scope", String(16), nullable=False),
    Column("specified_project", BigInteger, nullable=True),
    Column("filter_query", Text, nullable=False),
    Column("public", Boolean, nullable=False, default=False),
)

favorite_filters = Table(
    "favorite_filters",
    metadata,
    Column("user_id", BigInteger, primary_key=True),
    Column("filter", ID, ForeignKey("filters.id", ondelete="CASCADE"), primary_key=True),
)

categories = Table(
    "categories",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False),
    Column("parent", ID, ForeignKey("categories.id"), nullable=True),
    Column("visible", Boolean, nullable=False, default=True),
    UniqueConstraint("parent", "name", name="uq_category_name"),
)

item_categories = Table(
    "item_categories",
    metadata,
    Column("item", BigInteger, primary_key=True),
    Column("category", ID, ForeignKey("categories.id"), primary_key=True, index=True),
)

outbox = outbox_table(metadata)
