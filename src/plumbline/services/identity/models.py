"""identity's tables."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from plumbline.common.db import ID
from plumbline.common.outbox import outbox_table

metadata = MetaData()

users = Table(
    "users",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("username", String(255), nullable=False, unique=True),
    Column("username_key", String(255), nullable=False, unique=True),
    Column("first_name", String(255), nullable=False, default=""),
    Column("last_name", String(255), nullable=False, default=""),
    Column("email", String(255), nullable=False, default=""),
    Column("phone", String(64), nullable=False, default=""),
    Column("title", String(255), nullable=False, default=""),
    Column("location", String(255), nullable=False, default=""),
    Column("license_type", String(32), nullable=False, default="NAMED"),
    Column("avatar_url", String(1024), nullable=False, default=""),
    Column("active", Boolean, nullable=False, default=True),
    Column("roles", String(255), nullable=False, default=""),
    Column("password_hash", String(255), nullable=False),
    Column("version", Integer, nullable=False, default=1),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("modified_at", DateTime(timezone=True), nullable=False),
)

groups = Table(
    "groups",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("project", BigInteger, nullable=True, index=True),
    Column("version", Integer, nullable=False, default=1),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("modified_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("name", "project", name="uq_groups_name_project"),
    # Never reuse the id of a deleted row (SQLite would, without this).
    sqlite_autoincrement=True,
)

group_members = Table(
    "group_members",
    metadata,
    Column("group_id", ID, ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True),
    Column("user_id", ID, ForeignKey("users.id"), primary_key=True, index=True),
)

api_clients = Table(
    "api_clients",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("client_id", String(64), nullable=False, unique=True),
    Column("secret_hash", String(255), nullable=False),
    Column("name", String(255), nullable=False),
    Column("user_id", ID, ForeignKey("users.id"), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # Set once revoked: the row stays so gateways can refuse the client's unexpired tokens.
    Column("revoked_at", DateTime(timezone=True), nullable=True, index=True),
)

cors_domains = Table(
    "cors_domains",
    metadata,
    Column("origin", String(255), primary_key=True),
    Column("position", Integer, nullable=False),
)

signing_keys = Table(
    "signing_keys",
    metadata,
    Column("kid", String(64), primary_key=True),
    Column("private_pem", Text, nullable=False),
    Column("public_pem", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# Entries that give a user or a user group a role on a project or a project folder.
permissions = Table(
    "permissions",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("project", BigInteger, nullable=False, index=True),
    Column("user_id", ID, ForeignKey("users.id", ondelete="CASCADE"), nullable=True, index=True),
    Column("group_id", ID, ForeignKey("groups.id", ondelete="CASCADE"), nullable=True, index=True),
    Column("role", String(32), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("project", "user_id", name="uq_permissions_project_user"),
    UniqueConstraint("project", "group_id", name="uq_permissions_project_group"),
    sqlite_autoincrement=True,
)

# Where each project and folder sits, as the items service reports it: an entry on a
# folder reaches the projects inside it.
project_tree = Table(
    "project_tree",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("parent", BigInteger, nullable=True, index=True),
    Column("is_folder", Boolean, nullable=False),
)

outbox = outbox_table(metadata)
