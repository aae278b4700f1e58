"""attachments' tables.

An attachment is an abstract item (id from the id blocks, document key from the
counters) with a file behind it. The file's bytes live in the blob store under a key the
service chooses (never the file's name); ``blobs`` remembers every blob that is not, or
no longer, the file of a committed record, until it is removed from the store.
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

from plumbline.common.outbox import outbox_table

metadata = MetaData()

attachments = Table(
    "attachments",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("project", BigInteger, nullable=False),
    Column("item_type", BigInteger, nullable=False),
    Column("document_key", String(64), nullable=False),
    Column("global_id", String(255), nullable=False),
    # fields.name, kept beside the map for sorting by name
    Column("name", String(255), nullable=False, default=""),
    Column("fields_json", Text, nullable=False, default="{}"),
    # The file: its blob key (null until one is uploaded), name, type, size and SHA-256.
    Column("blob", String(255), nullable=True),
    Column("file_name", String(1024), nullable=False, default=""),
    Column("mime_type", String(255), nullable=False, default=""),
    Column("file_size", BigInteger, nullable=False, default=0),
    Column("sha256", String(64), nullable=False, default=""),
    Column("locked", Boolean, nullable=False, default=False),
    Column("locked_by", BigInteger, nullable=True),
    Column("last_locked_at", DateTime(timezone=True), nullable=True),
    Column("version", Integer, nullable=False, default=1),
    Column("created_by", BigInteger, nullable=False),
    Column("modified_by", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("modified_at", DateTime(timezone=True), nullable=False),
    Column("last_activity_at", DateTime(timezone=True), nullable=False),
    Index("ix_attachments_project", "project", "id"),
    Index("ix_attachments_document_key", "document_key"),
)

# An attachment hangs on items, test plans and test runs (other services' records).
attachment_links = Table(
    "attachment_links",
    metadata,
    Column("owner", BigInteger, primary_key=True),
    Column(
        "attachment",
        BigInteger,
        ForeignKey("attachments.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("owner_project", BigInteger, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("ix_attachment_links_attachment", "attachment"),
)

# Blobs to remove from the store: an upload under way ("uploading": removed if it never
# commits) or a file replaced or deleted ("dropped": removed once its change committed).
blobs = Table(
    "blobs",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("state", String(16), nullable=False),
    Column("since", DateTime(timezone=True), nullable=False),
    Index("ix_blobs_state_since", "state", "since"),
)

outbox = outbox_table(metadata)
