"""Tags of a project and the items that carry them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, and_, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Access, AccessCache, Action, read_by_ids, readable_where
from plumbline.common.context import Principal
from plumbline.common.db import Database, affected, insert_id, unique_violation
from plumbline.common.errors import AlreadyExists, InvalidArgument, NotFound
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.items.foreign import NONE, Foreign, subject
from plumbline.services.items.models import item_tags, items, projects, tags


async def _page(
    session: AsyncSession, query: Any, order: Any, start_at: int, max_results: int
) -> tuple[list[Row[Any]], int]:
    total = await session.scalar(select(func.count()).select_from(query.subquery()))
    rows = (await session.execute(query.order_by(order).offset(start_at).limit(max_results))).all()
    return list(rows), int(total or 0)


class Tags:
    """Tag rules and storage: reading a tag needs READ on its project, creating, renaming,
    deleting it and tagging or untagging an item need WRITE."""

    def __init__(self, db: Database, outbox: Outbox, access: AccessCache) -> None:
        self.db = db
        self.outbox = outbox
        self.access = access

    async def page(
        self,
        project: int | None,
        item: int | None,
        start_at: int,
        max_results: int,
        foreign: Foreign = NONE,
    ) -> tuple[list[Row[Any]], int]:
        """A project's tags or an (abstract) item's, by name."""
        access = await self.access.current()
        async with self.db.read() as session:
            if item is not None:
                await subject(session, item, foreign, access)
                query = (
                    select(tags)
                    .join(item_tags, item_tags.c.tag == tags.c.id)
                    .where(item_tags.c.item == item)
                )
            else:
                if project is None:
                    raise InvalidArgument("the query parameter project is required")
                await _project(session, project)
                access.require(Action.READ, project)
                query = select(tags).where(tags.c.project == project)
            return await _page(session, query, tags.c.name, start_at, max_results)

    async def get_many(self, ids: list[int]) -> list[Row[Any]]:
        """Tags the caller may read, by id; a single unknown id is NotFound."""
        query = select(tags).where(tags.c.id.in_(ids)).order_by(tags.c.id)
        return await read_by_ids(self.db, await self.access.current(), query, ids, "tag")

    async def create(self, name: str, project: int) -> int:
        """``POST /tags``."""
        access = await self.access.current()
        caller = access.principal
        name = _name(name)
        try:
            async with self.outbox.transaction() as session:
                await _project(session, project, for_input=True)
                access.require(Action.WRITE, project, f"the tags of project {project}")
                tag_id = await insert_id(session, tags.insert().values(project=project, name=name))
                await self.outbox.add(session, _event("created", tag_id, project, caller, name))
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    f"A tag named {name!r} already exists in project {project}."
                ) from None
            raise
        return tag_id

    async def update(self, tag_id: int, name: str) -> None:
        """``PUT /tags/{id}``: renames."""
        access = await self.access.current()
        caller = access.principal
        name = _name(name)
        try:
            async with self.outbox.transaction() as session:
                row = await _tag(session, tag_id, access=access, action=Action.WRITE)
                await session.execute(update(tags).where(tags.c.id == tag_id).values(name=name))
                await self.outbox.add(session, _event("updated", tag_id, row.project, caller, name))
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    f"A tag named {name!r} already exists in that project."
                ) from None
            raise

    async def delete(self, tag_id: int) -> None:
        """``DELETE /tags/{id}``: removes it from every item too."""
        access = await self.access.current()
        caller = access.principal
        async with self.outbox.transaction() as session:
            row = await _tag(session, tag_id, access=access, action=Action.WRITE)
            await session.execute(item_tags.delete().where(item_tags.c.tag == tag_id))
            await session.execute(tags.delete().where(tags.c.id == tag_id))
            await self.outbox.add(session, _event("deleted", tag_id, row.project, caller, row.name))

    async def tag_item(self, item: int, tag_id: int, foreign: Foreign = NONE) -> None:
        """``POST /items/{id}/tags`` (and test plans' and runs'): WRITE on the item (the tag
        is of its project)."""
        access = await self.access.current()
        caller = access.principal
        async with self.outbox.transaction() as session:
            row = await subject(session, item, foreign, access, Action.WRITE)
            tag = await _tag(session, tag_id, for_input=True)
            if tag.project != row.project:
                raise InvalidArgument(
                    f"tag {tag_id} belongs to project {tag.project}, not the {row.noun}'s."
                )
            exists = await session.scalar(
                select(item_tags.c.tag).where(item_tags.c.item == item, item_tags.c.tag == tag_id)
            )
            if exists is not None:
                raise AlreadyExists(f"{str(row).capitalize()} already has the tag {tag.name!r}.")
            await session.execute(item_tags.insert().values(item=item, tag=tag_id))
            await self.outbox.add(session, _item_event("created", item, row.project, caller, tag))

    async def untag_item(self, item: int, tag_id: int, foreign: Foreign = NONE) -> None:
        """``DELETE /items/{id}/tags/{tagId}`` (and test plans' and runs'): WRITE on the
        item."""
        access = await self.access.current()
        caller = access.principal
        async with self.outbox.transaction() as session:
            row = await subject(session, item, foreign, access, Action.WRITE)
            tag = await _tag(session, tag_id)
            removed = await affected(
                session,
                item_tags.delete().where(item_tags.c.item == item, item_tags.c.tag == tag_id),
            )
            if removed == 0:
                raise NotFound(f"{str(row).capitalize()} does not have tag {tag_id}.")
            await self.outbox.add(session, _item_event("deleted", item, row.project, caller, tag))

    async def tagged_item_ids(
        self, tag_id: int, start_at: int, max_results: int
    ) -> tuple[list[int], int]:
        """``GET /tags/{id}/items``: ids of the active items with the tag that the caller
        may read, in tree order, and their total."""
        access = await self.access.current()
        async with self.db.read() as session:
            await _tag(session, tag_id, access=access, action=Action.READ)
            query = (
                select(items.c.id)
                .join(item_tags, and_(item_tags.c.item == items.c.id, item_tags.c.tag == tag_id))
                .where(items.c.active.is_(True), readable_where(access, items.c.project))
            )
            total = await session.scalar(select(func.count()).select_from(query.subquery()))
            ids = (
                await session.scalars(
                    query.order_by(items.c.project, items.c.global_sort_order)
                    .offset(start_at)
                    .limit(max_results)
                )
            ).all()
        return [int(i) for i in ids], int(total or 0)


def _name(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidArgument("name must not be empty.")
    return name


async def _project(session: AsyncSession, project: int, for_input: bool = False) -> None:
    if await session.scalar(select(projects.c.id).where(projects.c.id == project)) is None:
        if for_input:
            raise InvalidArgument(f"project: no project with id {project}.")
        raise NotFound(f"No project with id {project}.")


async def _tag(
    session: AsyncSession,
    tag_id: int,
    for_input: bool = False,
    access: Access | None = None,
    action: Action = Action.READ,
) -> Any:
    """A tag; with ``access``, refused unless the caller may ``action`` its project."""
    row = (await session.execute(select(tags).where(tags.c.id == tag_id))).first()
    if row is None:
        if for_input:
            raise InvalidArgument(f"tag: no tag with id {tag_id}.")
        raise NotFound(f"No tag with id {tag_id}.")
    if access is not None:
        access.require(action, row.project, f"tag {tag_id}")
    return row


def _event(action: str, tag_id: int, project: int, actor: Principal, name: str) -> Event:
    return Event(
        f"items.tag.{action}",
        actor=actor.user_id,
        project=project,
        object_ids=[tag_id],
        payload={"name": name},
    )


def _item_event(action: str, item: int, project: int, actor: Principal, tag: Any) -> Event:
    return Event(
        f"items.itemtag.{action}",
        actor=actor.user_id,
        project=project,
        object_ids=[item, tag.id],
        payload={"name": tag.name, "item": item},
    )
