"""hooks' tables."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    false,
    true,
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

#: Webhook subscriptions: where to deliver which changes, as whom, and how far delivery
#: has come (the change feed's cursor).
webhooks = Table(
    "webhooks",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    # Deliveries carry what this user may read at delivery time.
    Column("owner", BigInteger, nullable=False),
    Column("url", Text, nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("active", Boolean, nullable=False),
    # Whether a delivery carries the changed record as GET answers it to the owner.
    Column("include_object", Boolean, nullable=False, default=True, server_default=true()),
    # The change feed's filters, each a JSON list (empty: any).
    Column("object_types", Text, nullable=False),
    Column("event_types", Text, nullable=False),
    Column("projects", Text, nullable=False),
    Column("item_types", Text, nullable=False),
    # The signing secret, sealed (``secrets.Sealer``); the previous one, after a
    # rotation, until ``previous_expires``.
    Column("secret", Text, nullable=False),
    Column("previous_secret", Text, nullable=True),
    Column("previous_expires", DateTime(timezone=True), nullable=True),
    # The feed's cursor delivered through: the next delivery is of a later change.
    Column("delivered_through", BigInteger, nullable=False),
    # While deliveries fail: since when, how many attempts of the change at hand, and
    # when to try again; past the retry period the webhook is disabled with the reason.
    Column("failing_since", DateTime(timezone=True), nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt", DateTime(timezone=True), nullable=True),
    Column("disabled_reason", Text, nullable=True),
    Column("created", DateTime(timezone=True), nullable=False),
    Column("modified", DateTime(timezone=True), nullable=False),
    Index("ix_webhooks_owner", "owner"),
    # A webhook's id is never given again (SQLite would reuse a deleted last one's): a
    # client holding it, or a delivery task still running for it, must not reach another.
    sqlite_autoincrement=True,
)

#: Every delivery attempt (the delivery log), kept as long as the feed keeps changes.
deliveries = Table(
    "deliveries",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("webhook", BigInteger, ForeignKey("webhooks.id", ondelete="CASCADE"), nullable=False),
    Column("cursor", BigInteger, nullable=False),
    Column("event_id", String(36), nullable=False),
    Column("type", String(96), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("redelivery", Boolean, nullable=False, default=False),
    Column("at", DateTime(timezone=True), nullable=False),
    # DELIVERED or FAILED.
    Column("outcome", String(16), nullable=False),
    Column("response_code", Integer, nullable=True),
    Column("duration_ms", Float, nullable=False),
    Column("error", Text, nullable=True),
    Index("ix_deliveries_webhook", "webhook", "id"),
    Index("ix_deliveries_at", "at"),
)

#: Changes a webhook's owner asked to have sent again, sent before the next new one.
redeliveries = Table(
    "redeliveries",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("webhook", BigInteger, ForeignKey("webhooks.id", ondelete="CASCADE"), nullable=False),
    Column("cursor", BigInteger, nullable=False),
    Column("asked", DateTime(timezone=True), nullable=False),
    Index("ix_redeliveries_webhook", "webhook", "id"),
)

consumed_events, consumer_positions = inbox_tables(metadata)
consumer_leases, consumer_members = lease_tables(metadata)
