"""Releases of a project, with the number of items that name them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import AccessCache, Action, read_by_ids
from plumbline.common.context import Principal
from plumbline.common.dates import parse_datetime
from plumbline.common.db import Database, first_or_missing, insert_id
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.items.models import item_releases, items, projects, releases


def parse_release_date(text: str) -> datetime:
    """A release date: a full date-time, or a plain yyyy-MM-dd day."""
    text = text.strip()
    if len(text) == 10:
        text += "T00:00:00.000+0000"
    return parse_datetime(text, "releaseDate")


class Releases:
    """Release rules and storage: reading needs READ on the release's project, creating
    and changing need WRITE."""

    def __init__(self, db: Database, outbox: Outbox, access: AccessCache) -> None:
        self.db = db
        self.outbox = outbox
        self.access = access

    async def page(self, project: int, start_at: int, max_results: int) -> tuple[list[Any], int]:
        """A project's releases with their item counts."""
        access = await self.access.current()
        async with self.db.read() as session:
            if await session.scalar(select(projects.c.id).where(projects.c.id == project)) is None:
                raise NotFound(f"No project with id {project}.")
            access.require(Action.READ, project)
            where = releases.c.project == project
            total = await session.scalar(select(func.count()).select_from(releases).where(where))
            rows = (
                await session.execute(
                    _with_counts()
                    .where(where)
                    .order_by(releases.c.id)
                    .offset(start_at)
                    .limit(max_results)
                )
            ).all()
        return list(rows), int(total or 0)

    async def get_many(self, ids: list[int]) -> list[Row[Any]]:
        """Releases the caller may read, by id; a single unknown id is NotFound."""
        query = _with_counts().where(releases.c.id.in_(ids)).order_by(releases.c.id)
        return await read_by_ids(self.db, await self.access.current(), query, ids, "release")

    async def create(
        self, name: str, description: str, release_date: str | None, project: int
    ) -> int:
        """``POST /releases``."""
        access = await self.access.current()
        caller = access.principal
        if not name.strip():
            raise InvalidArgument("name must not be empty.")
        when = parse_release_date(release_date) if release_date else None
        async with self.outbox.transaction() as session:
            if await session.scalar(select(projects.c.id).where(projects.c.id == project)) is None:
                raise InvalidArgument(f"project: no project with id {project}.")
            access.require(Action.WRITE, project, f"the releases of project {project}")
            release_id = await insert_id(
                session,
                releases.insert().values(
                    project=project,
                    name=name.strip(),
                    description=description,
                    release_date=when,
                    active=True,
                    archived=False,
                ),
            )
            await self.outbox.add(session, _event("created", release_id, project, caller, name))
        return release_id

    async def update(self, release_id: int, values: dict[str, Any]) -> None:
        """``PUT /releases/{id}``."""
        access = await self.access.current()
        caller = access.principal
        changes: dict[str, Any] = {}
        if "name" in values:
            if not str(values["name"]).strip():
                raise InvalidArgument("name must not be empty.")
            changes["name"] = str(values["name"]).strip()
        if "description" in values:
            changes["description"] = values["description"]
        if values.get("clear_release_date"):
            changes["release_date"] = None
        elif values.get("release_date"):
            changes["release_date"] = parse_release_date(values["release_date"])
        async with self.outbox.transaction() as session:
            row = await first_or_missing(
                session,
                select(releases).where(releases.c.id == release_id),
                f"No release with id {release_id}.",
            )
            access.require(Action.WRITE, row.project, f"release {release_id}")
            if "project" in values and values["project"] != row.project:
                raise InvalidArgument("A release cannot move to another project.")
            if changes:
                await session.execute(
                    update(releases).where(releases.c.id == release_id).values(**changes)
                )
            await self.outbox.add(
                session,
                _event("updated", release_id, row.project, caller, changes.get("name", row.name)),
            )


def _with_counts() -> Any:
    counted = (
        select(func.count())
        .select_from(item_releases.join(items, items.c.id == item_releases.c.item))
        .where(item_releases.c.release == releases.c.id, items.c.active.is_(True))
        .scalar_subquery()
    )
    return select(releases, counted.label("item_count"))


async def check_releases(
    session: AsyncSession, project: int, release_ids: set[int], names: dict[int, str]
) -> None:
    """Every release an item names must exist in the item's project."""
    if not release_ids:
        return
    found = {
        r.id: r.project
        for r in (
            await session.execute(
                select(releases.c.id, releases.c.project).where(releases.c.id.in_(release_ids))
            )
        ).all()
    }
    for release_id in sorted(release_ids):
        if found.get(release_id) != project:
            raise InvalidArgument(
                f"fields.{names[release_id]}: no release with id {release_id} in project {project}."
            )


async def sync_item_releases(session: AsyncSession, item: int, release_ids: set[int]) -> None:
    """Makes ``item_releases`` say exactly which releases ``item`` names."""
    await session.execute(item_releases.delete().where(item_releases.c.item == item))
    for release_id in sorted(release_ids):
        await session.execute(item_releases.insert().values(item=item, release=release_id))


def _event(action: str, release_id: int, project: int, actor: Principal, name: str) -> Event:
    return Event(
        f"items.release.{action}",
        actor=actor.user_id,
        project=project,
        object_ids=[release_id],
        payload={"name": name},
    )
