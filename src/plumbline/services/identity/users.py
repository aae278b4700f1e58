"""Users: reading, creating and changing them, and who may."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from plumbline.common.context import Principal, require_principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, insert_id, unique_violation
from plumbline.common.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
)
from plumbline.common.outbox import Outbox
from plumbline.services.identity import store
from plumbline.services.identity.crypto import Passwords
from plumbline.services.identity.events import user_event
from plumbline.services.identity.guards import listing_scope, require_user_admin
from plumbline.services.identity.models import users
from plumbline.services.identity.permissions import Permissions

USER_FIELDS = (
    "username",
    "first_name",
    "last_name",
    "email",
    "phone",
    "title",
    "location",
    "license_type",
)
REQUIRED_ON_CREATE = ("username", "first_name", "last_name", "email", "license_type", "password")


def _check_username(name: str) -> None:
    """User names go into Basic credentials (``user:password``) and into logs."""
    if (
        ":" in name
        or not name.isprintable()
        or name != name.strip()
        or any(c.isspace() and c != " " for c in name)
    ):
        raise InvalidArgument(
            "username may contain any printable characters except ':' (Basic authentication "
            "separates user name and password with it), and must not start or end with a "
            f"space; got {name!r}."
        )


async def insert_user(
    outbox: Outbox, values: dict[str, Any], hashed: str, roles: str, actor: Principal
) -> int:
    """Writes a new user and its ``identity.user.created`` event (no rules checked: the
    callers, ``Users.create_user`` and the first start's admin, have checked them)."""
    now = utcnow()
    row = {f: values.get(f) or "" for f in USER_FIELDS}
    try:
        async with outbox.transaction() as session:
            user_id = await insert_id(
                session,
                users.insert().values(
                    **row,
                    username_key=row["username"].lower(),
                    active=True,
                    roles=roles,
                    password_hash=hashed,
                    version=1,
                    created_at=now,
                    modified_at=now,
                ),
            )
            await outbox.add(session, user_event("created", user_id, actor, row["username"], 1))
    except IntegrityError as exc:
        if unique_violation(exc):
            raise AlreadyExists(
                f"A user with the username {row['username']!r} already exists."
            ) from None
        raise
    return user_id


class Users:
    """User rules and storage: administrators manage users, users change themselves, and
    a user sees those who share a group or a project with them."""

    def __init__(
        self, db: Database, outbox: Outbox, passwords: Passwords, permissions: Permissions
    ) -> None:
        self.db = db
        self.outbox = outbox
        self.passwords = passwords
        self.permissions = permissions

    async def list_users(self, project: int | None = None, **filters: Any) -> tuple[list[Any], int]:
        """``GET /users``: user administrators; with ``project``, its administrators too."""
        among = await listing_scope(self.permissions, project, "users")
        async with self.db.read() as session:
            return await store.list_users(session, among=among, **filters)

    async def get_users(self, ids: list[int]) -> list[Any]:
        """Batch read for includes; no visibility filter beyond authentication."""
        require_principal()
        async with self.db.read() as session:
            return await store.users_by_ids(session, ids)

    async def get_user(self, user_id: int) -> Any:
        """One user, if the caller may see them."""
        caller = require_principal()
        async with self.db.read() as session:
            row = await store.user_or_missing(session, user_id)
            if caller.user_id == user_id or caller.may_manage_users:
                return row
            shares_group = await store.share_a_group(session, caller.user_id, user_id)
        if not shares_group and not await self.permissions.share_a_project(caller, user_id):
            raise PermissionDenied(f"You do not have access to user {user_id}.")
        return row

    async def create_user(self, values: dict[str, Any]) -> int:
        """``POST /users``."""
        caller = require_user_admin()
        missing = [f for f in REQUIRED_ON_CREATE if not values.get(f)]
        if missing:
            raise InvalidArgument(f"Missing required field(s): {', '.join(missing)}.")
        _check_username(values["username"])
        hashed = await self.passwords.hash(values.pop("password"))
        return await insert_user(self.outbox, values, hashed, roles="", actor=caller)

    async def update_user(self, user_id: int, values: dict[str, Any]) -> None:
        """``PUT /users/{id}``: administrators, or users changing themselves."""
        caller = require_principal()
        if caller.user_id != user_id and not caller.may_manage_users:
            raise PermissionDenied(f"You may not change user {user_id}.")
        if "password" in values:
            raise InvalidArgument("password cannot be changed with PUT /users/{id}.")
        changes = {
            f: values[f] if values[f] is not None else "" for f in USER_FIELDS if f in values
        }
        if "username" in changes:
            if not changes["username"]:
                raise InvalidArgument("username must not be empty.")
            _check_username(changes["username"])
            changes["username_key"] = changes["username"].lower()
        try:
            async with self.outbox.transaction() as session:
                current = await store.user_or_missing(session, user_id)
                license_type = changes.get("license_type", current.license_type)
                if license_type != current.license_type and not caller.may_manage_users:
                    raise PermissionDenied(
                        "Only organization or user administrators may change licenseType."
                    )
                version = current.version + 1
                await session.execute(
                    update(users)
                    .where(users.c.id == user_id)
                    .values(**changes, version=version, modified_at=utcnow())
                )
                name = changes.get("username", current.username)
                await self.outbox.add(
                    session, user_event("updated", user_id, caller, name, version)
                )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    f"A user with the username {changes.get('username')!r} already exists."
                ) from None
            raise

    async def set_user_active(self, user_id: int, active: bool) -> None:
        """``PUT /users/{id}/active``."""
        caller = require_user_admin()
        if user_id == caller.user_id and not active:
            raise FailedPrecondition("You cannot deactivate yourself.")
        async with self.outbox.transaction() as session:
            current = await store.user_or_missing(session, user_id)
            version = current.version + 1
            await session.execute(
                update(users)
                .where(users.c.id == user_id)
                .values(active=active, version=version, modified_at=utcnow())
            )
            action = "activated" if active else "deactivated"
            await self.outbox.add(
                session, user_event(action, user_id, caller, current.username, version)
            )
