"""contains index: trigram FTS5 table (SQLite), trigram GIN index (PostgreSQL)

Revision ID: 0011_contains_index
Revises: 0010

``GET /abstractitems?contains=`` matches substrings of ``items.search_text``; without an
index that reads every item in scope.

SQLite: ``items_fts`` is an external-content FTS5 table (it stores only the index and
reads text from ``items``), keyed by ``items.id``, kept in step by triggers on every
insert, change of ``search_text`` and delete. Triggers, not the write paths, so that no
writer can forget it. Alembic's batch mode rebuilds a table by copying it and dropping
the original, which drops its triggers: a later migration that rebuilds ``items`` on
SQLite must create these triggers again.

PostgreSQL: a GIN index with ``gin_trgm_ops``, which the existing ``LIKE`` uses as it is.
"""

from __future__ import annotations

from alembic import op


revision = "0011_contains_index"
down_revision = "0010"
branch_labels = None
depends_on = None

PG_INDEX = "ix_items_search_text_trgm"

SQLITE_UP = [
    # content_rowid: items.id is BIGINT, so not an alias of the rowid, which VACUUM may
    # renumber; the id is stable and has the primary-key index for lookups.
    """
    CREATE VIRTUAL TABLE items_fts USING fts5(
        search_text, content='items', content_rowid='id', tokenize='trigram'
    )
    """,
    """
    CREATE TRIGGER items_fts_insert AFTER INSERT ON items BEGIN
        INSERT INTO items_fts (rowid, search_text) VALUES (new.id, new.search_text);
    END
    """,
    # An external-content table forgets a row by being told the text it indexed.
    """
    CREATE TRIGGER items_fts_delete AFTER DELETE ON items BEGIN
        INSERT INTO items_fts (items_fts, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
    END
    """,
    """
    CREATE TRIGGER items_fts_update AFTER UPDATE OF id, search_text ON items BEGIN
        INSERT INTO items_fts (items_fts, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
        INSERT INTO items_fts (rowid, search_text) VALUES (new.id, new.search_text);
    END
    """,
    "INSERT INTO items_fts (items_fts) VALUES ('rebuild')",
]

SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS items_fts_update",
    "DROP TRIGGER IF EXISTS items_fts_delete",
    "DROP TRIGGER IF EXISTS items_fts_insert",
    "DROP TABLE IF EXISTS items_fts",
]


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_UP:
            op.execute(statement)
    elif dialect == "postgresql":
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        op.create_index(
            PG_INDEX,
            "items",
            ["search_text"],
            postgresql_using="gin",
            postgresql_ops={"search_text": "gin_trgm_ops"},
        )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_DOWN:
            op.execute(statement)
    elif dialect == "postgresql":
        # pg_trgm stays: it may have been there before, and other objects may use it.
        op.drop_index(PG_INDEX, table_name="items")
