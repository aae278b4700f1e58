"""Project permissions: who has which role on which project or folder, and what that adds
up to for one user (folders reach the projects inside them, groups reach their members)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Access, Action, Role, parse_role, stronger
from plumbline.common.context import Principal, require_principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, insert_id
from plumbline.common.errors import InvalidArgument, NotFound, PermissionDenied
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.identity.models import (
    group_members,
    groups,
    permissions,
    project_tree,
    users,
)


@dataclass(frozen=True)
class Entry:
    """One permission entry as a request gives it: a user or a group, and a role."""

    user: int | None
    group: int | None
    role: Role | None

    @property
    def subject(self) -> str:
        """How messages name the entry's subject."""
        return f"user {self.user}" if self.user is not None else f"user group {self.group}"


def entry(user: int | None, group: int | None, role: str | None) -> Entry:
    """Checks that an entry names exactly one subject; ``role`` may be absent (deletes)."""
    if (user is None) == (group is None):
        raise InvalidArgument("Each permission entry needs exactly one of user and userGroup.")
    return Entry(user, group, parse_role(role) if role is not None else None)


class Permissions:
    """Permission entries, the project tree they apply through, and effective roles."""

    def __init__(self, db: Database, outbox: Outbox) -> None:
        self.db = db
        self.outbox = outbox

    # -- effective roles ---------------------------------------------------------

    async def roles_of(self, user_id: int) -> dict[int, Role]:
        """The user's effective role by project and folder id."""
        async with self.db.read() as session:
            return await resolve(session, user_id)

    async def access(self, principal: Principal) -> Access:
        """identity's own checks use the same ``Access`` as every other service."""
        if principal.is_admin:
            return Access(principal, {})
        return Access(principal, await self.roles_of(principal.user_id))

    async def _require_admin_of(self, project: int) -> Principal:
        caller = require_principal()
        (await self.access(caller)).require(
            Action.ADMIN, project, f"the permissions of project {project}"
        )
        return caller

    # -- entries -----------------------------------------------------------------

    async def entries_of(self, project: int) -> list[Row[Any]]:
        """The entries on one project or folder (project administrators)."""
        await self._require_admin_of(project)
        async with self.db.read() as session:
            await _check_placed(session, project)
            return await _entries(session, project)

    async def replace(self, project: int, entries: list[Entry]) -> list[Row[Any]]:
        """POST: the given entries become the scope's only ones."""
        caller = await self._require_admin_of(project)
        _check_distinct(entries)
        async with self.outbox.transaction() as session:
            await _check_placed(session, project)
            await _check_subjects(session, entries)
            wanted = {(e.user, e.group): e for e in entries}
            for row in await _entries(session, project):
                if (row.user_id, row.group_id) not in wanted:
                    await self._remove(session, row, caller)
            await self._upsert(session, project, entries, caller)
            return await _entries(session, project)

    async def update(self, project: int, entries: list[Entry]) -> list[Row[Any]]:
        """PUT: adds or changes the given subjects' entries, leaving the others."""
        caller = await self._require_admin_of(project)
        _check_distinct(entries)
        async with self.outbox.transaction() as session:
            await _check_placed(session, project)
            await _check_subjects(session, entries)
            await self._upsert(session, project, entries, caller)
            return await _entries(session, project)

    async def delete(self, project: int, entries: list[Entry]) -> None:
        """DELETE: removes the given subjects' entries."""
        caller = await self._require_admin_of(project)
        if not entries:
            raise InvalidArgument("Name the entries to remove with user or userGroup.")
        async with self.outbox.transaction() as session:
            await _check_placed(session, project)
            current = {(r.user_id, r.group_id): r for r in await _entries(session, project)}
            for wanted in entries:
                row = current.get((wanted.user, wanted.group))
                if row is None:
                    raise NotFound(f"{wanted.subject} has no entry on project {project}.")
                await self._remove(session, row, caller)

    async def grant_creator(self, project: int) -> None:
        """The caller becomes administrator of a project nobody has an entry on yet."""
        caller = require_principal()
        if caller.user_id <= 0:
            return
        async with self.outbox.transaction() as session:
            await _check_placed(session, project)
            if await _entries(session, project):
                raise PermissionDenied(
                    f"Project {project} already has permission entries; ask its administrator."
                )
            creator = Entry(caller.user_id, None, Role.PROJECT_ADMIN)
            await self._upsert(session, project, [creator], caller)

    async def _remove(self, session: AsyncSession, row: Any, caller: Principal) -> None:
        await session.execute(delete(permissions).where(permissions.c.id == row.id))
        stored = Entry(row.user_id, row.group_id, Role(row.role))
        await self.outbox.add(session, _event("deleted", row.id, row.project, stored, caller))

    async def _upsert(
        self, session: AsyncSession, project: int, entries: Iterable[Entry], caller: Principal
    ) -> None:
        current = {(r.user_id, r.group_id): r for r in await _entries(session, project)}
        for wanted in entries:
            assert wanted.role is not None
            row = current.get((wanted.user, wanted.group))
            if row is None:
                entry_id = await insert_id(
                    session,
                    permissions.insert().values(
                        project=project,
                        user_id=wanted.user,
                        group_id=wanted.group,
                        role=wanted.role.value,
                        created_at=utcnow(),
                    ),
                )
                await self.outbox.add(
                    session,
                    _event("created", entry_id, project, wanted, caller),
                )
            elif row.role != wanted.role.value:
                await session.execute(
                    update(permissions)
                    .where(permissions.c.id == row.id)
                    .values(role=wanted.role.value)
                )
                await self.outbox.add(session, _event("updated", row.id, project, wanted, caller))

    # -- the project tree --------------------------------------------------------

    async def place(self, placements: list[tuple[int, int | None, bool]], complete: bool) -> None:
        """Records where projects sit; announces a change so that caches drop.

        ``complete`` means the list holds every project: the others are forgotten.
        """
        async with self.outbox.transaction() as session:
            known = {
                row.id: (row.parent, row.is_folder)
                for row in (await session.execute(select(project_tree))).all()
            }
            changed: list[int] = []
            for project, parent, is_folder in placements:
                before = known.get(project)
                if before == (parent, is_folder):
                    continue
                changed.append(project)
                if before is None:
                    await session.execute(
                        project_tree.insert().values(id=project, parent=parent, is_folder=is_folder)
                    )
                else:
                    await session.execute(
                        update(project_tree)
                        .where(project_tree.c.id == project)
                        .values(parent=parent, is_folder=is_folder)
                    )
            if complete:
                gone = set(known) - {p for p, _, _ in placements}
                if gone:
                    changed.extend(sorted(gone))
                    await session.execute(delete(project_tree).where(project_tree.c.id.in_(gone)))
            if changed:
                await self.outbox.add(
                    session,
                    Event(
                        "identity.projecttree.updated",
                        actor=None,
                        object_ids=changed[:100],
                        payload={"projects": len(changed)},
                    ),
                )

    # -- who shares what -----------------------------------------------------------

    async def administers(self, principal: Principal, project: int) -> bool:
        """Whether ``principal`` is an administrator of ``project``."""
        return (await self.access(principal)).may(Action.ADMIN, project)

    async def share_a_project(self, principal: Principal, other: int) -> bool:
        """Whether ``principal`` and user ``other`` both have a role on some project."""
        mine = (await self.access(principal)).readable()
        theirs = await self.roles_of(other)
        if mine is None:
            return True
        return bool(mine & set(theirs))

    async def members_of(self, project: int) -> set[int]:
        """Users with a role on ``project``: directly, through a group or a folder."""
        async with self.db.read() as session:
            scopes = [project, *await _ancestors(session, project)]
            rows = (
                await session.execute(
                    select(permissions.c.user_id, permissions.c.group_id).where(
                        permissions.c.project.in_(scopes)
                    )
                )
            ).all()
            found = {r.user_id for r in rows if r.user_id is not None}
            group_ids = [r.group_id for r in rows if r.group_id is not None]
            if group_ids:
                found |= set(
                    (
                        await session.scalars(
                            select(group_members.c.user_id).where(
                                group_members.c.group_id.in_(group_ids)
                            )
                        )
                    ).all()
                )
        return found


async def resolve(session: AsyncSession, user_id: int) -> dict[int, Role]:
    """The effective role by project of one user (the strongest that reaches it)."""
    group_ids = select(group_members.c.group_id).where(group_members.c.user_id == user_id)
    rows = (
        await session.execute(
            select(permissions.c.project, permissions.c.role).where(
                or_(permissions.c.user_id == user_id, permissions.c.group_id.in_(group_ids))
            )
        )
    ).all()
    if not rows:
        return {}
    direct: dict[int, Role] = {}
    for row in rows:
        direct[row.project] = stronger(direct.get(row.project), Role(row.role))
    folders = set(
        (
            await session.scalars(
                select(project_tree.c.id).where(
                    project_tree.c.id.in_(list(direct)), project_tree.c.is_folder.is_(True)
                )
            )
        ).all()
    )
    if not folders:
        return direct
    children: dict[int, list[int]] = {}
    for child, parent in (
        await session.execute(select(project_tree.c.id, project_tree.c.parent))
    ).all():
        if parent is not None:
            children.setdefault(parent, []).append(child)
    roles = dict(direct)
    for folder in folders:
        stack = list(children.get(folder, ()))
        while stack:
            project = stack.pop()
            roles[project] = stronger(roles.get(project), direct[folder])
            stack.extend(children.get(project, ()))
    return roles


async def _ancestors(session: AsyncSession, project: int) -> list[int]:
    parents = {
        row.id: row.parent
        for row in (await session.execute(select(project_tree.c.id, project_tree.c.parent))).all()
    }
    found: list[int] = []
    current = parents.get(project)
    while current is not None and current not in found:
        found.append(current)
        current = parents.get(current)
    return found


async def _check_placed(session: AsyncSession, project: int) -> None:
    known = await session.scalar(select(project_tree.c.id).where(project_tree.c.id == project))
    if known is None:
        raise NotFound(f"No project or project folder with id {project}.")


async def _entries(session: AsyncSession, project: int) -> list[Row[Any]]:
    return list(
        (
            await session.execute(
                select(permissions)
                .where(permissions.c.project == project)
                .order_by(permissions.c.id)
            )
        ).all()
    )


def _check_distinct(entries: list[Entry]) -> None:
    seen: set[tuple[int | None, int | None]] = set()
    for wanted in entries:
        if wanted.role is None:
            raise InvalidArgument(f"The entry for {wanted.subject} needs a role.")
        key = (wanted.user, wanted.group)
        if key in seen:
            raise InvalidArgument(f"{wanted.subject} appears more than once.")
        seen.add(key)


async def _check_subjects(session: AsyncSession, entries: list[Entry]) -> None:
    user_ids = {e.user for e in entries if e.user is not None}
    group_ids = {e.group for e in entries if e.group is not None}
    if user_ids:
        found = set(
            (await session.scalars(select(users.c.id).where(users.c.id.in_(user_ids)))).all()
        )
        if user_ids - found:
            raise InvalidArgument(f"user: no user with id {min(user_ids - found)}.")
    if group_ids:
        found = set(
            (await session.scalars(select(groups.c.id).where(groups.c.id.in_(group_ids)))).all()
        )
        if group_ids - found:
            raise InvalidArgument(f"userGroup: no user group with id {min(group_ids - found)}.")


def _event(action: str, entry_id: int, project: int, entry: Entry, caller: Principal) -> Event:
    assert entry.role is not None
    payload: dict[str, Any] = {"project": project, "role": entry.role.value}
    if entry.user is not None:
        payload["user"] = entry.user
    else:
        payload["userGroup"] = entry.group
    return Event(
        f"identity.permission.{action}",
        actor=caller.user_id or None,
        project=project,
        object_ids=[entry_id],
        payload=payload,
    )
