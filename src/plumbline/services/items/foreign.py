"""What tags, links, comments and relationships hang on: an item of this service, or an
abstract item another service owns (a test plan or a test run).

Those families are kept here for any abstract item, keyed by its id. Another service's
record is vouched for by the gateway: it reads the record from its owner first (which
answers 404, or 401, as the caller's access demands) and passes its id and project in the
request (``ForeignItem``). This service trusts that project, as services trust the
gateway, but checks the caller's role there with its own access cache, and refuses an id
of one of its own items (which it reads from its own table instead).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from sqlalchemy import delete, func, literal, or_, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Access, Action, readable_where
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.common.events import Event
from plumbline.services.items import tree
from plumbline.services.items.idspace import owner_in
from plumbline.services.items.models import (
    comments,
    foreign_items,
    item_links,
    item_tags,
    items,
    relationships,
)


@dataclass(frozen=True)
class Subject:
    """An abstract item that something hangs on, and the project it belongs to."""

    id: int
    project: int
    #: How sentences name it ("item", "test plan", "test run").
    noun: str = "item"
    #: Owned by another service.
    foreign: bool = False

    def __str__(self) -> str:
        return f"{self.noun} {self.id}"


#: The foreign abstract items a request vouches for, by id.
Foreign = Mapping[int, Subject]
#: A request that vouches for none.
NONE: Foreign = MappingProxyType({})


def vouched(entries: Iterable[Any]) -> dict[int, Subject]:
    """A request's ``ForeignItem`` messages as subjects, by id."""
    return {
        e.id: Subject(e.id, e.project, e.noun or "abstract item", foreign=True) for e in entries
    }


async def subject(
    session: AsyncSession,
    item_id: int,
    foreign: Foreign,
    access: Access | None = None,
    action: Action = Action.READ,
    member: str | None = None,
) -> Subject:
    """The item or foreign abstract item ``item_id``; with ``access``, refused unless the
    caller may ``action`` it. A missing item is NotFound, or InvalidArgument naming the body
    ``member`` that named it."""
    found = foreign.get(item_id)
    if found is not None:
        if await owner_in(session, item_id) == "items":
            raise InvalidArgument(f"{item_id} is an item, not a {found.noun}.")
    else:
        project = await session.scalar(
            select(items.c.project).where(items.c.id == item_id, items.c.active.is_(True))
        )
        if project is None:
            if member is not None:
                raise InvalidArgument(f"{member}: no item with id {item_id}.")
            raise NotFound(f"No item with id {item_id}.")
        found = Subject(item_id, int(project))
    if access is not None:
        access.require(action, found.project, str(found))
    return found


async def remember(db: Database, session: AsyncSession, subjects: Iterable[Subject]) -> None:
    """Keeps the project of each foreign subject, for reads that check a relationship's
    far end (test records never change project, so the first one stays)."""
    rows = [{"id": s.id, "project": s.project} for s in subjects if s.foreign]
    if rows:
        await session.execute(db.insert_ignoring_duplicates(foreign_items), rows)


def ends(items_only: bool = False) -> Any:
    """Every abstract item a relationship may end at, as rows (id, project, foreign):
    active items and the foreign items relationships named."""
    own = select(items.c.id, items.c.project, literal(False).label("foreign")).where(
        items.c.active.is_(True)
    )
    if items_only:
        return own.subquery()
    others = select(foreign_items.c.id, foreign_items.c.project, literal(True).label("foreign"))
    return union_all(own, others).subquery()


def readable_ids(access: Access) -> Any:
    """Ids of the abstract items (items and foreign ones) the caller may read."""
    return union_all(
        select(items.c.id).where(readable_where(access, items.c.project)),
        select(foreign_items.c.id).where(readable_where(access, foreign_items.c.project)),
    )


def project_of(item: Any) -> Any:
    """The project of the abstract item whose id is the column ``item`` (a scalar
    subquery)."""
    own = select(items.c.project).where(items.c.id == item).scalar_subquery()
    other = select(foreign_items.c.project).where(foreign_items.c.id == item).scalar_subquery()
    return func.coalesce(own, other)


#: The events whose records take what hangs on them along (``<prefix>.`` before it), and
#: the durable consumer of each.
DELETED = {"testmgmt.*.deleted": "items", "attachments.attachment.deleted": "items-attachments"}
_RECORDS = ("testplan", "testcycle", "testrun", "attachment")


async def on_deleted(db: Database, event: Event) -> None:
    """A test plan, cycle or run, or an attachment, was deleted: its tags, links,
    comments and relationships go, as do those of the cycles and runs a plan took along
    (repeating it changes nothing)."""
    if event.entity not in _RECORDS:
        return
    ids = [*event.object_ids, *event.payload.get("records", [])]
    async with db.transaction() as session:
        await forget(session, ids)


async def forget(session: AsyncSession, ids: list[int]) -> None:
    """After their owner deleted them: what hung on these foreign abstract items goes."""
    await session.execute(item_tags.delete().where(item_tags.c.item.in_(ids)))
    await session.execute(item_links.delete().where(item_links.c.item.in_(ids)))
    await session.execute(delete(comments).where(comments.c.item.in_(ids)))
    gone = await session.execute(
        relationships.delete()
        .where(or_(relationships.c.from_item.in_(ids), relationships.c.to_item.in_(ids)))
        .returning(relationships.c.project, relationships.c.visible)
    )
    await tree.count_relationships(session, tree.fewer(r.project for r in gone.all() if r.visible))
    await session.execute(foreign_items.delete().where(foreign_items.c.id.in_(ids)))
