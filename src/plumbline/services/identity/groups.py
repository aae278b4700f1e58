"""User groups and their members."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from plumbline.common.access import Action
from plumbline.common.context import require_principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, affected, insert_id, unique_violation
from plumbline.common.errors import AlreadyExists, InvalidArgument, NotFound, PermissionDenied
from plumbline.common.outbox import Outbox
from plumbline.services.identity import store
from plumbline.services.identity.events import group_event
from plumbline.services.identity.guards import listing_scope, require_user_admin
from plumbline.services.identity.models import group_members, groups
from plumbline.services.identity.permissions import Permissions


class Groups:
    """Group rules and storage: user administrators manage groups and their members; a
    group is seen by administrators, its members and readers of its project."""

    def __init__(self, db: Database, outbox: Outbox, permissions: Permissions) -> None:
        self.db = db
        self.outbox = outbox
        self.permissions = permissions

    async def list_groups(
        self, project: int | None, start_at: int, max_results: int
    ) -> tuple[list[Any], int]:
        """``GET /usergroups``: user administrators; with ``project``, its administrators."""
        await listing_scope(self.permissions, project, "user groups")
        async with self.db.read() as session:
            return await store.list_groups(session, project, start_at, max_results)

    async def get_groups(self, ids: list[int]) -> list[Any]:
        """Groups by id."""
        require_principal()
        async with self.db.read() as session:
            return await store.groups_by_ids(session, ids)

    async def get_group(self, group_id: int) -> Any:
        """One group: administrators and its members."""
        caller = require_principal()
        async with self.db.read() as session:
            group = await store.group_or_missing(session, group_id)
            member = caller.may_manage_users or await session.scalar(
                select(group_members.c.user_id).where(
                    group_members.c.group_id == group_id,
                    group_members.c.user_id == caller.user_id,
                )
            )
        project = group.project
        if member is None and not (
            project is not None
            and (await self.permissions.access(caller)).may(Action.READ, project)
        ):
            raise PermissionDenied(f"You do not have access to user group {group_id}.")
        return group

    async def create_group(self, name: str, description: str, project: int | None) -> int:
        """``POST /usergroups``."""
        caller = require_user_admin()
        if not name.strip():
            raise InvalidArgument("name must not be empty.")
        now = utcnow()
        try:
            async with self.outbox.transaction() as session:
                await self._check_group_name(session, name, project, None)
                group_id = await insert_id(
                    session,
                    groups.insert().values(
                        name=name,
                        description=description,
                        project=project,
                        version=1,
                        created_at=now,
                        modified_at=now,
                    ),
                )
                await self.outbox.add(
                    session, group_event("created", group_id, caller, name, project)
                )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(f"A user group named {name!r} already exists.") from None
            raise
        return group_id

    async def _check_group_name(
        self, session: Any, name: str, project: int | None, exclude: int | None
    ) -> None:
        # NULL projects are never equal in a unique index, so organisation-wide
        # groups are checked here as well.
        query = select(groups.c.id).where(groups.c.name == name)
        query = query.where(
            groups.c.project.is_(None) if project is None else groups.c.project == project
        )
        if exclude is not None:
            query = query.where(groups.c.id != exclude)
        if await session.scalar(query) is not None:
            raise AlreadyExists(f"A user group named {name!r} already exists.")

    async def update_group(self, group_id: int, values: dict[str, Any]) -> None:
        """``PUT /usergroups/{id}``."""
        caller = require_user_admin()
        async with self.outbox.transaction() as session:
            current = await store.group_or_missing(session, group_id)
            changes = {k: v for k, v in values.items() if k in ("name", "description", "project")}
            if "name" in changes and not (changes["name"] or "").strip():
                raise InvalidArgument("name must not be empty.")
            name = changes.get("name", current.name)
            project = changes.get("project", current.project)
            await self._check_group_name(session, name, project, group_id)
            await session.execute(
                update(groups)
                .where(groups.c.id == group_id)
                .values(**changes, version=current.version + 1, modified_at=utcnow())
            )
            await self.outbox.add(session, group_event("updated", group_id, caller, name, project))

    async def delete_group(self, group_id: int) -> None:
        """``DELETE /usergroups/{id}``."""
        caller = require_user_admin()
        async with self.outbox.transaction() as session:
            group = await store.group_or_missing(session, group_id)
            await session.execute(delete(group_members).where(group_members.c.group_id == group_id))
            await session.execute(delete(groups).where(groups.c.id == group_id))
            await self.outbox.add(
                session, group_event("deleted", group_id, caller, group.name, group.project)
            )

    async def group_members(
        self, group_id: int, start_at: int, max_results: int
    ) -> tuple[list[Any], int]:
        """``GET /usergroups/{id}/users``."""
        await self.get_group(group_id)
        async with self.db.read() as session:
            return await store.group_members_page(session, group_id, start_at, max_results)

    async def add_member(self, group_id: int, user_id: int) -> None:
        """``POST /usergroups/{id}/users``."""
        caller = require_user_admin()
        async with self.outbox.transaction() as session:
            group = await store.group_or_missing(session, group_id)
            if await store.user_by_id(session, user_id) is None:
                raise InvalidArgument(f"No user with id {user_id}.")
            exists = await session.scalar(
                select(group_members.c.user_id).where(
                    group_members.c.group_id == group_id, group_members.c.user_id == user_id
                )
            )
            if exists is not None:
                raise AlreadyExists(f"User {user_id} already exists in user group {group_id}.")
            await session.execute(group_members.insert().values(group_id=group_id, user_id=user_id))
            await self.outbox.add(
                session,
                group_event("member_added", group_id, caller, group.name, group.project, user_id),
            )

    async def remove_member(self, group_id: int, user_id: int) -> None:
        """``DELETE /usergroups/{id}/users/{userId}``."""
        caller = require_user_admin()
        async with self.outbox.transaction() as session:
            group = await store.group_or_missing(session, group_id)
            removed = await affected(
                session,
                delete(group_members).where(
                    group_members.c.group_id == group_id, group_members.c.user_id == user_id
                ),
            )
            if removed == 0:
                raise NotFound(f"User {user_id} is not a member of user group {group_id}.")
            await self.outbox.add(
                session,
                group_event("member_removed", group_id, caller, group.name, group.project, user_id),
            )
