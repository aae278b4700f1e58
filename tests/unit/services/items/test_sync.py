"""Synchronized items: pools that share a global id, joining and leaving one, and
whether two items of a pool agree (their synchronized fields, and their children)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.services.items.sync import SyncState
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.items.conftest import READER_OF_A, World


async def _pair(world: World) -> tuple[int, int]:
    """Requirement A1 in project A and B1 in B, in one pool."""
    a1 = await world.item("Login", description="Users log in.")
    b1 = await world.item("Login", project=world.b, description="Users log in.")
    with acting_as(ADMIN):
        await world.sync.add(a1, b1)
    return a1, b1


async def _set(world: World, item: int, **fields: Any) -> None:
    with acting_as(ADMIN):
        await world.items.patch(
            item,
            [{"op": "add", "path": f"/fields/{k}", "value": v} for k, v in fields.items()],
            False,
        )


async def test_an_item_joins_a_pool_and_leaves_it_with_a_new_global_id(world: World) -> None:
    a1, b1 = await _pair(world)
    rows = await world.rows(a1, b1)
    assert rows[b1].global_id == rows[a1].global_id == f"GID-REQ-{a1}"
    assert rows[b1].version == 2
    with acting_as(ADMIN):
        pool, total = await world.sync.pool(a1, 0, 10)
    assert ([r.id for r in pool], total) == ([b1], 1)
    # Members in projects the caller may not read are left out, and not counted.
    with acting_as(READER_OF_A):
        assert await world.sync.pool(a1, 0, 10) == ([], 0)
    last = await world.last_event()
    with acting_as(ADMIN):
        await world.sync.remove(a1, b1)
        assert await world.sync.pool(a1, 0, 10) == ([], 0)
    left = (await world.rows(b1))[b1]
    assert re.fullmatch("GID-[0-9A-F]{12}", left.global_id)
    assert left.version == 3
    [event] = await world.events_after(last)
    assert (event.type, event.object_ids, event.payload["globalId"]) == (
        "items.item.updated",
        [b1],
        left.global_id,
    )


async def test_joining_and_leaving_are_refused_with_their_reasons(world: World) -> None:
    a1, b1 = await _pair(world)
    feature = await world.item("F", project=world.b, type_key="FEAT")
    lone = await world.item("Lone")
    refused_joins = [
        (a1, a1, "An item cannot be synchronized with itself."),
        (a1, 999_999, "item: no item with id 999999."),
        (a1, b1, f"Item {b1} is already in the pool of item {a1}."),
        (a1, feature, "Only items of the same item type can be synchronized."),
    ]
    for pool_item, item, message in refused_joins:
        with acting_as(ADMIN), pytest.raises(InvalidArgument) as refused:
            await world.sync.add(pool_item, item)
        assert str(refused.value) == message
    refused_leaves = [
        (a1, 999_999, "No item with id 999999."),
        (a1, lone, f"Item {lone} is not synchronized with item {a1}."),
    ]
    for pool_item, item, message in refused_leaves:
        with acting_as(ADMIN), pytest.raises(NotFound) as missing:
            await world.sync.remove(pool_item, item)
        assert str(missing.value) == message
    with acting_as(ADMIN), pytest.raises(InvalidArgument) as refused:
        await world.sync.remove(a1, a1)
    assert str(refused.value) == "An item cannot be synchronized with itself."


async def test_two_items_agree_on_their_synchronized_fields_only(world: World) -> None:
    a1, b1 = await _pair(world)
    with acting_as(ADMIN):
        assert await world.sync.status(a1, b1) == SyncState(True, False, 0, 0, 0)
    await _set(world, b1, priority=None, assignedTo=ADMIN.user_id)  # not synchronized
    with acting_as(ADMIN):
        assert (await world.sync.status(a1, b1)).in_sync is True
    await _set(world, b1, description="Users sign in.")  # synchronized
    with acting_as(ADMIN):
        assert await world.sync.status(a1, b1) == SyncState(False, False, 0, 0, 0)
    lone = await world.item("Lone")
    with acting_as(ADMIN), pytest.raises(NotFound) as missing:
        await world.sync.status(a1, lone)
    assert str(missing.value) == f"Item {lone} is not synchronized with item {a1}."


async def test_children_are_matched_with_their_twins_under_the_synced_item(
    world: World,
) -> None:
    a1, b1 = await _pair(world)
    kids = {name: await world.item(name, a1) for name in ("K1", "K2", "K3")}
    twins = {name: await world.item(name, b1, project=world.b) for name in ("K1", "K2")}
    with acting_as(ADMIN):
        for name, twin in twins.items():
            await world.sync.add(kids[name], twin)
    await _set(world, twins["K2"], name="K2 changed")
    # K1 agrees, K2 is out of sync, K3 has no twin under B1.
    with acting_as(ADMIN):
        assert await world.sync.status(a1, b1) == SyncState(False, True, 3, 1, 1)
    await _set(world, twins["K2"], name="K2")
    with acting_as(ADMIN):
        assert await world.sync.status(a1, b1) == SyncState(False, True, 3, 1, 0)
        await world.items.delete(kids["K3"])
        assert await world.sync.status(a1, b1) == SyncState(True, True, 2, 0, 0)
    # A child of B1 without a twin under A1 puts them out of sync, though none is
    # missing or out of sync from A1's side.
    await world.item("Extra", b1, project=world.b)
    with acting_as(ADMIN):
        assert await world.sync.status(a1, b1) == SyncState(False, True, 2, 0, 0)
