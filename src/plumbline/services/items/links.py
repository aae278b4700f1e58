"""URL links of items, and duplicating an item."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlparse

from sqlalchemy import Row, func, select, update

from plumbline.common.access import Access, Action
from plumbline.common.db import affected, insert_id
from plumbline.common.errors import FailedPrecondition, InvalidArgument, NotFound
from plumbline.common.events import Event
from plumbline.services.items.foreign import NONE, Foreign, Subject, subject
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.items import Items
from plumbline.services.items.models import item_links, item_tags, items


def _check_url(url: str) -> str:
    url = url.strip()
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https", "ftp", "mailto", "file") or not (
        parsed.netloc or parsed.path
    ):
        raise InvalidArgument(
            f"url must be an absolute URL (http, https, ftp, mailto or file), got {url!r}."
        )
    return url


def _event(action: str, owner: Subject, link: int, url: str, actor: int) -> Event:
    """``items.itemlink.<action>``: the activity feed shows it as a URL of the item."""
    return Event(
        f"items.itemlink.{action}",
        actor=actor,
        project=owner.project,
        object_ids=[link],
        payload={"name": url, "item": owner.id},
    )


class Links:
    """Item links and duplication."""

    def __init__(self, items_: Items) -> None:
        self.items = items_
        self.db = items_.db

    async def _owner(self, item: int, foreign: Foreign, action: Action) -> tuple[Access, Subject]:
        """The caller's access and the (abstract) item, if the caller may ``action`` it."""
        access = await self.items.access.current()
        async with self.db.read() as session:
            owner = await subject(session, item, foreign, access, action)
        return access, owner

    async def page(
        self,
        item: int,
        link: int | None,
        start_at: int,
        max_results: int,
        foreign: Foreign = NONE,
    ) -> tuple[list[Row[Any]], int]:
        """An (abstract) item's links (or one of them): READ on the item."""
        _, owner = await self._owner(item, foreign, Action.READ)
        where = item_links.c.item == item
        if link is not None:
            where = where & (item_links.c.id == link)
        async with self.db.read() as session:
            total = await session.scalar(select(func.count()).select_from(item_links).where(where))
            rows = (
                await session.execute(
                    select(item_links)
                    .where(where)
                    .order_by(item_links.c.id)
                    .offset(start_at)
                    .limit(max_results)
                )
            ).all()
        if link is not None and not rows:
            raise NotFound(f"{str(owner).capitalize()} has no link {link}.")
        return list(rows), int(total or 0)

    async def create(self, item: int, url: str, description: str, foreign: Foreign = NONE) -> int:
        """``POST /items/{id}/links`` (and test plans' and runs')."""
        access, owner = await self._owner(item, foreign, Action.WRITE)
        caller = access.principal
        url = _check_url(url)
        async with self.items.outbox.transaction() as session:
            link = await insert_id(
                session, item_links.insert().values(item=item, url=url, description=description)
            )
            await self.items.outbox.add(
                session, _event("created", owner, link, url, caller.user_id)
            )
        return link

    async def update(
        self, item: int, link: int, url: str, description: str, foreign: Foreign = NONE
    ) -> None:
        """``PUT /items/{id}/links/{linkId}`` (and test plans' and runs')."""
        access, owner = await self._owner(item, foreign, Action.WRITE)
        caller = access.principal
        url = _check_url(url)
        async with self.items.outbox.transaction() as session:
            changed = await affected(
                session,
                update(item_links)
                .where(item_links.c.item == item, item_links.c.id == link)
                .values(url=url, description=description),
            )
            if changed == 0:
                raise NotFound(f"{str(owner).capitalize()} has no link {link}.")
            await self.items.outbox.add(
                session, _event("updated", owner, link, url, caller.user_id)
            )

    async def delete(self, item: int, link: int, foreign: Foreign = NONE) -> None:
        """``DELETE /items/{id}/links/{linkId}`` (and test plans' and runs')."""
        access, owner = await self._owner(item, foreign, Action.WRITE)
        caller = access.principal
        async with self.items.outbox.transaction() as session:
            url = await session.scalar(
                select(item_links.c.url).where(item_links.c.item == item, item_links.c.id == link)
            )
            if url is None:
                raise NotFound(f"{str(owner).capitalize()} has no link {link}.")
            await session.execute(item_links.delete().where(item_links.c.id == link))
            await self.items.outbox.add(
                session, _event("deleted", owner, link, url, caller.user_id)
            )

    async def duplicate(self, item_id: int, include_tags: bool, include_links: bool) -> int:
        """``POST /items/{id}/duplicate``: a copy of name and description under the same parent.

        READ on the source and WRITE on the project the copy goes to (the source's).
        """
        access = await self.items.access.current()
        [source] = await self.items.get_many([item_id])
        access.require(Action.WRITE, source.project, f"the items of project {source.project}")
        async with self.db.read() as session:
            children = await session.scalar(
                select(func.count())
                .select_from(items)
                .where(items.c.parent == item_id, items.c.active.is_(True))
            )
        if children:
            raise FailedPrecondition(
                f"Item {item_id} has children; only items without children can be duplicated."
            )
        fields = json.loads(source.fields_json)
        # Name and description, as the contract says, and the values of required fields,
        # without which the copy could not be made.
        item_type = (await self.items.config.catalog()).item_types.get(source.item_type)
        required = (
            [f.name for f in item_type.fields if f.required and not f.read_only]
            if item_type
            else []
        )
        copied = {k: fields[k] for k in ("name", "description", *required) if k in fields}
        new_id = await self.items.create(
            ItemInput(
                project=source.project,
                item_type=source.item_type,
                child_item_type=source.child_item_type,
                parent_item=source.parent,
                parent_project=None if source.parent is not None else source.project,
                fields=copied,
            )
        )
        async with self.db.transaction() as session:
            if include_tags:
                for tag in (
                    await session.scalars(
                        select(item_tags.c.tag).where(item_tags.c.item == item_id)
                    )
                ).all():
                    await session.execute(item_tags.insert().values(item=new_id, tag=tag))
            if include_links:
                for link in (
                    await session.execute(select(item_links).where(item_links.c.item == item_id))
                ).all():
                    await session.execute(
                        item_links.insert().values(
                            item=new_id, url=link.url, description=link.description
                        )
                    )
        return new_id
