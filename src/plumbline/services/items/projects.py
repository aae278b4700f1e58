"""Projects and project folders."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Container
from dataclasses import dataclass
from typing import Any

from grpc import aio
from sqlalchemy import Row, func, select, update
from sqlalchemy.exc import IntegrityError

from plumbline.api.identity.v1 import identity_pb2, identity_pb2_grpc
from plumbline.common.access import Access, AccessCache, Action, read_by_ids, readable_where
from plumbline.common.context import Principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, first_or_missing, insert_id, unique_violation
from plumbline.common.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unavailable,
)
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.items.models import projects

log = logging.getLogger(__name__)

PROJECT_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")


@dataclass
class ProjectInput:
    """What a create or update may set; ``None`` leaves a value as it is."""

    project_key: str | None = None
    is_folder: bool | None = None
    parent: int | None = None
    clear_parent: bool = False
    fields: dict[str, Any] | None = None


class Placer:
    """Tells identity where projects and folders sit, so that an entry on a folder
    reaches the projects inside it.

    A report identity cannot take now (it is starting or down) does not fail the write
    that made it: the placer falls behind and ``keep`` reports every project again once
    identity answers.
    """

    def __init__(self, channel: Callable[[], aio.Channel]) -> None:
        self.channel = channel
        self.behind = asyncio.Event()
        self.behind.set()  # nothing reported since this process started

    async def place(self, rows: list[Any]) -> None:
        """Reports ``rows``; when identity is unavailable, falls behind instead of
        failing."""
        try:
            await self._send(rows, complete=False)
        except Unavailable as exc:
            log.warning("project places wait for identity: %s", exc)
            self.behind.set()

    async def keep(self, everything: Callable[[], Awaitable[list[Any]]]) -> None:
        """Runs until cancelled: whenever the placer is behind, reports ``everything``
        (every project), retrying with backoff until identity takes it."""
        while True:
            await self.behind.wait()
            self.behind.clear()
            delay = 0.5
            while True:
                try:
                    await self._send(await everything(), complete=True)
                    break
                except Exception as exc:  # identity may start later than items
                    log.warning("cannot report project places to identity yet: %s", exc)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 10.0)

    async def _send(self, rows: list[Any], complete: bool) -> None:
        """``complete``: ``rows`` are every project there is."""
        placements = [
            identity_pb2.ProjectPlacement(id=r.id, parent=r.parent, is_folder=r.is_folder)
            for r in rows
        ]
        stub = identity_pb2_grpc.PermissionsStub(self.channel())
        await stub.PlaceProjects(
            identity_pb2.ProjectPlacements(projects=placements, complete=complete)
        )


class Projects:
    """Project rules and storage."""

    def __init__(self, db: Database, outbox: Outbox, access: AccessCache, placer: Placer) -> None:
        self.db = db
        self.outbox = outbox
        self.access = access
        self.placer = placer

    async def page(self, start_at: int, max_results: int) -> tuple[list[Row[Any]], int]:
        """A page of the projects the caller may read, in id order, and their total."""
        where = readable_where(await self.access.current(), projects.c.id)
        async with self.db.read() as session:
            total = await session.scalar(select(func.count()).select_from(projects).where(where))
            rows = (
                await session.execute(
                    select(projects)
                    .where(where)
                    .order_by(projects.c.id)
                    .offset(start_at)
                    .limit(max_results)
                )
            ).all()
        return list(rows), int(total or 0)

    async def get_many(self, ids: list[int]) -> list[Row[Any]]:
        """Projects the caller may read, by id; a single missing id is a NotFound."""
        query = select(projects).where(projects.c.id.in_(ids)).order_by(projects.c.id)
        return await read_by_ids(
            self.db, await self.access.current(), query, ids, "project", lambda row: int(row.id)
        )

    async def placements(self) -> list[Any]:
        """Every project's place (id, parent, folder flag), for ``Placer.keep``."""
        async with self.db.read() as session:
            rows = await session.execute(
                select(projects.c.id, projects.c.parent, projects.c.is_folder)
            )
            return list(rows.all())

    async def _may_place(self, access: Access, parent: int | None) -> None:
        """Top-level projects are the organisation administrators'; a folder's
        administrators may create projects and folders inside it."""
        if parent is None:
            if not access.everything:
                raise PermissionDenied(
                    "Only organization administrators may create or move projects at the top "
                    "level; project folder administrators may do so inside their folder."
                )
        else:
            access.require(Action.ADMIN, parent, f"project folder {parent}")

    async def create(self, data: ProjectInput) -> int:
        """``POST /projects``: the caller's identity grant follows (see the gateway)."""
        access = await self.access.current()
        caller = access.principal
        await self._may_place(access, data.parent)
        is_folder = bool(data.is_folder)
        fields = dict(data.fields or {})
        name = fields.get("name")
        if not isinstance(name, str) or not name.strip():
            raise InvalidArgument("fields.name is required: every project and folder has a name.")
        key = data.project_key or fields.get("projectKey")
        if not is_folder and not key:
            raise InvalidArgument("projectKey is required unless isFolder is true.")
        if key is not None:
            _check_key(key)
        fields.pop("projectKey", None)
        now = utcnow()
        try:
            async with self.outbox.transaction() as session:
                if data.parent is not None:
                    await self._check_parent(session, data.parent, None)
                project_id = await insert_id(
                    session,
                    projects.insert().values(
                        project_key=key,
                        parent=data.parent,
                        is_folder=is_folder,
                        name=name,
                        fields_json=json.dumps(fields),
                        version=1,
                        created_by=caller.user_id,
                        modified_by=caller.user_id,
                        created_at=now,
                        modified_at=now,
                    ),
                )
                await self.outbox.add(
                    session, _event("created", project_id, caller, name, key, 1, is_folder)
                )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(f"A project with the key {key!r} already exists.") from None
            raise
        await self.placer.place([_Placed(project_id, data.parent, is_folder)])
        return project_id

    async def update(self, project_id: int, data: ProjectInput) -> None:
        """``PUT /projects/{id}``: the body replaces key, folder flag, parent and fields."""
        access = await self.access.current()
        caller = access.principal
        access.require(Action.ADMIN, project_id)
        try:
            async with self.outbox.transaction() as session:
                current = await first_or_missing(
                    session,
                    select(projects).where(projects.c.id == project_id),
                    f"No project with id {project_id}.",
                )
                fields = json.loads(current.fields_json)
                fields["name"] = current.name
                if data.fields is not None:
                    fields.update(data.fields)
                name = fields.get("name")
                if not isinstance(name, str) or not name.strip():
                    raise InvalidArgument("fields.name must not be empty.")
                is_folder = current.is_folder if data.is_folder is None else data.is_folder
                key = data.project_key or fields.get("projectKey") or current.project_key
                if key is not None and key != current.project_key:
                    _check_key(key)
                if not is_folder and not key:
                    raise InvalidArgument("projectKey is required unless isFolder is true.")
                if current.is_folder and not is_folder:
                    await self._check_no_children(session, project_id)
                parent = current.parent
                if data.clear_parent:
                    parent = None
                elif data.parent is not None:
                    await self._check_parent(session, data.parent, project_id)
                    parent = data.parent
                if parent != current.parent:
                    await self._may_place(access, parent)
                fields.pop("projectKey", None)
                fields.pop("name", None)
                version = current.version + 1
                await session.execute(
                    update(projects)
                    .where(projects.c.id == project_id)
                    .values(
                        project_key=key,
                        is_folder=is_folder,
                        parent=parent,
                        name=name,
                        fields_json=json.dumps(fields),
                        version=version,
                        modified_by=caller.user_id,
                        modified_at=utcnow(),
                    )
                )
                await self.outbox.add(
                    session, _event("updated", project_id, caller, name, key, version, is_folder)
                )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(f"A project with the key {key!r} already exists.") from None
            raise
        await self.placer.place([_Placed(project_id, parent, is_folder)])

    async def add_item_type(
        self, project_id: int, item_type_id: int, item_types: Container[int]
    ) -> None:
        """``PUT /projects/{id}/itemtypes/{itemTypeId}``: makes the type available in the
        project. Configuration is organisation-wide and every item type is available in
        every project (``GET /projects/{id}/itemtypes`` lists them all), so this checks
        that the caller administers the project, that the project (not a folder) and the
        type (one of ``item_types``) exist, and changes nothing: it is idempotent and
        emits no event."""
        (await self.access.current()).require(Action.ADMIN, project_id)
        async with self.db.read() as session:
            row = await first_or_missing(
                session,
                select(projects.c.is_folder).where(projects.c.id == project_id),
                f"No project with id {project_id}.",
            )
        if row.is_folder:
            raise InvalidArgument(
                f"{project_id} is a project folder; item types are added to projects, "
                "and a folder holds no items."
            )
        if item_type_id not in item_types:
            raise NotFound(f"No item type with id {item_type_id}.")

    async def _check_no_children(self, session: Any, folder: int) -> None:
        """Only an empty folder may become a project: a parent must be a folder."""
        child = await session.scalar(
            select(projects.c.id).where(projects.c.parent == folder).limit(1)
        )
        if child is not None:
            raise InvalidArgument(
                f"isFolder: project folder {folder} holds projects (such as {child}); "
                "move them out before making it a project."
            )

    async def _check_parent(self, session: Any, parent: int, moving: int | None) -> None:
        row = (
            await session.execute(
                select(projects.c.id, projects.c.is_folder, projects.c.parent).where(
                    projects.c.id == parent
                )
            )
        ).first()
        if row is None:
            raise InvalidArgument(f"parent: no project folder with id {parent}.")
        if not row.is_folder:
            raise InvalidArgument(f"parent: project {parent} is not a folder.")
        # A folder cannot move under itself or one of its descendants.
        seen = row
        while moving is not None and seen is not None:
            if seen.id == moving:
                raise InvalidArgument("parent: a project folder cannot be placed inside itself.")
            if seen.parent is None:
                break
            seen = (
                await session.execute(
                    select(projects.c.id, projects.c.parent).where(projects.c.id == seen.parent)
                )
            ).first()


@dataclass(frozen=True)
class _Placed:
    id: int
    parent: int | None
    is_folder: bool


def _check_key(key: str) -> None:
    if not PROJECT_KEY.match(key):
        raise InvalidArgument(
            f"projectKey must start with a letter and hold only letters, digits and "
            f"underscores (at most 32 characters), got {key!r}."
        )


def _event(
    action: str,
    project_id: int,
    actor: Principal,
    name: str,
    key: str | None,
    version: int,
    is_folder: bool,
) -> Event:
    return Event(
        f"items.project.{action}",
        actor=actor.user_id,
        project=project_id,
        object_ids=[project_id],
        version=version,
        payload={"name": name, "projectKey": key, "isFolder": is_folder},
    )
