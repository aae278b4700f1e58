"""Restoring deleted items on a real SQLite database: which items come back, where, and
with which events."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from plumbline.common.access import Role
from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.errors import FailedPrecondition, NotFound, PermissionDenied
from plumbline.common.events import Event
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.items import Items
from plumbline.services.items.models import outbox as outbox_table
from plumbline.services.items.relationships import Relationships
from plumbline.services.items.restore import Restore
from tests.unit.services.conftest import (
    ADMIN,
    access_cache,
    acting_as,
    project_with_configuration,
)

READER = Principal(7, "reader")


class World:
    """A project of items, and the domain objects that change them."""

    def __init__(
        self, items: Items, relationships: Relationships, restore: Restore, project: int, req: int
    ) -> None:
        self.items = items
        self.relationships = relationships
        self.restore = restore
        self.project = project
        self.req = req

    async def item(self, name: str, parent: int | None = None) -> int:
        return await self.items.create(
            ItemInput(
                project=self.project, item_type=self.req, fields={"name": name}, parent_item=parent
            )
        )


@pytest.fixture
async def world(items_db: Database) -> World:
    outbox, config, project, types = await project_with_configuration(items_db, "RST")
    access = access_cache({READER.user_id: {project: Role.READ_ONLY}})
    items = Items(items_db, outbox, config, IdSpace(items_db), access)
    relationships = Relationships(items_db, outbox, config, access)
    restore = Restore(items_db, outbox, config, access)
    return World(items, relationships, restore, project, types["REQ"])


async def _events(db: Database, after: int) -> list[Event]:
    async with db.read() as session:
        bodies = await session.scalars(
            select(outbox_table.c.body).where(outbox_table.c.id > after).order_by(outbox_table.c.id)
        )
        return [Event.from_json(body) for body in bodies]


async def test_only_the_subtree_that_hangs_below_comes_back(world: World) -> None:
    with acting_as(ADMIN):
        top = await world.item("Top")
        child = await world.item("Child", top)
        grandchild = await world.item("Grandchild", child)
        stranger = await world.item("Stranger")
        outside = await world.item("Outside")
        kept, lost = await world.relationships.create_many(
            [(child, outside, None), (grandchild, stranger, None)]
        )
        await world.items.delete(stranger)
        await world.items.delete(top)
        mark = await world.items.outbox.watermark()
        # The stranger is deleted too, but not below the item: it stays deleted.
        restored = await world.restore.restore(top, [grandchild, stranger, child, 999])
        assert restored == [top, child, grandchild]
        rows = await world.items.get_many([top, child, grandchild])
        with pytest.raises(NotFound):
            await world.items.get_many([stranger])
        with pytest.raises(FailedPrecondition, match="not deleted"):
            await world.restore.restore(top, [])
    assert [r.sequence for r in rows] == ["1", "1.1", "1.1.1"]
    assert [r.version for r in rows] == [2, 2, 2]
    events = await _events(world.items.db, mark)
    assert [e.type for e in events] == ["items.item.restored"] * 3 + ["items.relationship.restored"]
    assert [e.object_ids for e in events] == [[top], [child], [grandchild], [kept]]
    assert [e.version for e in events[:3]] == [2, 2, 2]
    assert all("snapshot" in e.payload for e in events[:3])
    assert events[3].payload["fromItem"] == child
    assert events[3].payload["toItem"] == outside
    assert events[3].payload["toProject"] == world.project
    with acting_as(ADMIN):
        [shown] = await world.relationships.get_many([kept])
        # Its other end is still deleted: it stays hidden.
        with pytest.raises(NotFound):
            await world.relationships.get_many([lost])
    assert shown.visible


async def test_reading_deleted_items_and_who_may_restore(world: World) -> None:
    with acting_as(ADMIN):
        gone = await world.item("Gone")
        await world.items.delete(gone)
    with acting_as(READER):
        [row] = await world.restore.get_many([gone, 123456])
        assert row.id == gone
        assert not row.active
        with pytest.raises(PermissionDenied):
            await world.restore.restore(gone, [])
    with acting_as(Principal(8, "stranger")), pytest.raises(PermissionDenied):
        await world.restore.get_many([gone])
    with acting_as(ADMIN), pytest.raises(NotFound):
        await world.restore.restore(123456, [])
