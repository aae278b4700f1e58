"""Bulk loading: many items and relationships in one transaction, by the same rules."""

from __future__ import annotations

import pytest
from sqlalchemy import Table, func, select, update

from plumbline.common.dates import format_datetime
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument
from plumbline.common.events import Event
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.items import Items
from plumbline.services.items.models import items as items_table
from plumbline.services.items.models import projects as projects_table
from plumbline.services.items.models import relationships as relationships_table
from plumbline.services.items.relationships import Relationships
from plumbline.services.items.tree import GAP
from tests.unit.services.conftest import (
    ADMIN,
    access_cache,
    acting_as,
    project_with_configuration,
)


@pytest.fixture
async def world(items_db: Database) -> tuple[Items, Relationships, int, dict[str, int]]:
    outbox, config, project, types = await project_with_configuration(items_db, "BULK")
    items = Items(items_db, outbox, config, IdSpace(items_db), access_cache())
    return items, Relationships(items_db, outbox, config, access_cache()), project, types


def _req(project: int, types: dict[str, int], name: str, parent: int | None = None) -> ItemInput:
    return ItemInput(
        project=project, item_type=types["REQ"], fields={"name": name}, parent_item=parent
    )


async def _count(db: Database, table: Table) -> int:
    async with db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(table)) or 0)


async def test_a_batch_is_placed_like_single_creates(
    world: tuple[Items, Relationships, int, dict[str, int]],
) -> None:
    items, relationships, project, types = world
    with acting_as(ADMIN):
        [folder] = await items.create_many(
            [ItemInput(project=project, item_type=types["FLD"], fields={"name": "F"})]
        )
        batch = [_req(project, types, f"R{n}", parent=folder) for n in range(5)]
        ids = await items.create_many(batch)
        single = await items.create(_req(project, types, "R5", parent=folder))
        rows = await items.get_many([*ids, single])
        rel_ids = await relationships.create_many([(ids[0], ids[1], None), (ids[1], ids[2], None)])
    assert [r.sequence for r in rows] == [f"1.{n}" for n in range(1, 7)]
    assert [r.sort_order for r in rows] == list(range(6))
    assert [r.document_key for r in rows] == [f"BULK-REQ-{n}" for n in range(1, 7)]
    orders = [r.global_sort_order for r in rows]
    assert orders == sorted(orders)
    assert len(set(orders)) == 6
    assert len(rel_ids) == 2
    assert rel_ids[0] < rel_ids[1]
    # One event per item and per relationship, as single creates make.
    assert await items.outbox.watermark() == 1 + 1 + 5 + 1 + 2


async def test_a_bad_entry_rolls_back_the_whole_batch(
    world: tuple[Items, Relationships, int, dict[str, int]],
) -> None:
    items, relationships, project, types = world
    with acting_as(ADMIN):
        good = _req(project, types, "ok")
        orphan = _req(project, types, "orphan", parent=999_999)
        with pytest.raises(InvalidArgument, match="no item with id 999999"):
            await items.create_many([good, good, orphan])
        assert await _count(items.db, items_table) == 0
        ids = await items.create_many([good, good])
        with pytest.raises(InvalidArgument, match="different items"):
            await relationships.create_many([(ids[0], ids[1], None), (ids[0], ids[0], None)])
        with pytest.raises(InvalidArgument):
            await relationships.create_many([(ids[0], ids[1], None), (ids[0], 999_999, None)])
    assert await _count(items.db, relationships_table) == 0


async def test_appends_past_the_gap_renumber_the_project_in_tree_order(
    world: tuple[Items, Relationships, int, dict[str, int]],
) -> None:
    items, _, project, types = world
    with acting_as(ADMIN):
        first, second = await items.create_many(
            [_req(project, types, "first"), _req(project, types, "second")]
        )
        # Leave room for two appends under "first" before "second"'s number.
        async with items.db.transaction() as session:
            await session.execute(
                update(items_table)
                .where(items_table.c.id == second)
                .values(global_sort_order=items_table.c.global_sort_order - GAP + 3)
            )
        children = await items.create_many(
            [_req(project, types, f"child {n}", parent=first) for n in range(4)]
        )
        rows = await items.get_many([first, *children, second])
    orders = [r.global_sort_order for r in rows]
    # The third append found no room: the project was renumbered (GAP apart, in tree
    # order), then the appends went on one number past the subtree.
    assert orders == [GAP, 2 * GAP, 3 * GAP, 3 * GAP + 1, 3 * GAP + 2, 4 * GAP]


async def _events(items: Items) -> list[Event]:
    """Every event in the outbox, in order."""
    table = items.outbox.table
    async with items.db.read() as session:
        bodies = (await session.scalars(select(table.c.body).order_by(table.c.id))).all()
    return [Event.from_json(body) for body in bodies]


async def test_a_change_carries_the_row_it_wrote(
    world: tuple[Items, Relationships, int, dict[str, int]],
) -> None:
    items, _, project, types = world
    with acting_as(ADMIN):
        item = await items.create(_req(project, types, "before"))
        await items.patch(
            item, [{"op": "replace", "path": "/fields/name", "value": "after"}], False
        )
        [row] = await items.get_many([item])
    created, updated = (await _events(items))[-2:]
    assert (created.action, created.version) == ("created", 1)
    assert created.payload["documentKey"] == row.document_key
    assert created.payload["snapshot"]["location"]["sequence"] == "1"
    assert (updated.action, updated.version, row.version) == ("updated", 2, 2)
    assert updated.payload["name"] == "after"
    assert updated.payload["snapshot"]["modifiedDate"] == format_datetime(row.modified_at)


async def test_a_patch_that_moves_the_item_runs_under_the_project_lock(
    world: tuple[Items, Relationships, int, dict[str, int]],
) -> None:
    items, _, project, types = world
    with acting_as(ADMIN):
        first, second = await items.create_many(
            [_req(project, types, "first"), _req(project, types, "second")]
        )
        before = len(await _events(items))
        await items.patch(
            second, [{"op": "replace", "path": "/location/parent", "value": {"item": first}}], False
        )
        [moved] = await items.get_many([second])
    events = await _events(items)
    # The attempt under the row lock rolled back: one event, one new version.
    assert len(events) == before + 1
    assert (moved.parent, moved.sequence, moved.version) == (first, "1.1", 2)
    assert events[-1].payload["snapshot"]["location"]["sequence"] == "1.1"


async def test_a_single_create_goes_after_the_subtree_of_its_parent_at_any_depth(
    world: tuple[Items, Relationships, int, dict[str, int]],
) -> None:
    items, _, project, types = world
    with acting_as(ADMIN):
        a = await items.create(_req(project, types, "A"))
        a1 = await items.create(_req(project, types, "A1", parent=a))
        a1a = await items.create(_req(project, types, "A1a", parent=a1))
        b = await items.create(_req(project, types, "B"))
        # A1a has no next sibling, nor has A1: A's (B) ends the subtree.
        deep = await items.create(_req(project, types, "A1a x", parent=a1a))
        # A1 has none: B ends A1's subtree, which now holds A1a and its child.
        under_a1 = await items.create(_req(project, types, "A1b", parent=a1))
        # B is the last at the root: nothing ends its subtree.
        under_b = await items.create(_req(project, types, "B1", parent=b))
        at_root = await items.create(_req(project, types, "C"))
        rows = {
            r.id: r for r in await items.get_many([a, a1, a1a, b, deep, under_a1, under_b, at_root])
        }
    walk = sorted(rows, key=lambda i: rows[i].global_sort_order)
    assert walk == [a, a1, a1a, deep, under_a1, b, under_b, at_root]
    assert [rows[i].sequence for i in walk] == [
        "1",
        "1.1",
        "1.1.1",
        "1.1.1.1",
        "1.1.2",
        "2",
        "2.1",
        "3",
    ]


async def test_a_single_create_says_what_is_wrong_with_its_place(
    world: tuple[Items, Relationships, int, dict[str, int]],
) -> None:
    items, _, project, types = world
    with acting_as(ADMIN):
        parent = await items.create(_req(project, types, "P"))
        other = ItemInput(project=project + 1000, item_type=types["REQ"], fields={"name": "x"})
        with pytest.raises(InvalidArgument, match="no item with id 999999"):
            await items.create(_req(project, types, "orphan", parent=999_999))
        with pytest.raises(InvalidArgument, match=f"no project with id {project + 1000}"):
            await items.create(other)
        with pytest.raises(InvalidArgument, match="does not match the parent item's project"):
            await items.create(
                ItemInput(
                    project=project + 1000,
                    item_type=types["REQ"],
                    fields={"name": "x"},
                    parent_item=parent,
                )
            )
        with pytest.raises(InvalidArgument, match="takes an item or a project, not both"):
            await items.create(
                ItemInput(
                    item_type=types["REQ"],
                    fields={"name": "x"},
                    parent_item=parent,
                    parent_project=project,
                )
            )
        with pytest.raises(InvalidArgument, match=r"does not match location\.parent\.project"):
            await items.create(
                ItemInput(
                    project=project + 1000,
                    item_type=types["REQ"],
                    fields={"name": "x"},
                    parent_project=project,
                )
            )
    # Nothing of the refused creates is left: the project counts the one item.
    async with items.db.read() as session:
        active = await session.scalar(
            select(projects_table.c.active_items).where(projects_table.c.id == project)
        )
    assert active == 1
