"""Pages of a project's items found by where earlier pages ended (``Positions``): the same
pages as walking to them, and never stale after the tree changes."""

from __future__ import annotations

from typing import Any

from plumbline.services.items.positions import Key, Place, Positions
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.items.conftest import World


async def names(world: World, start_at: int, size: int, root_only: bool = False) -> list[str]:
    with acting_as(ADMIN):
        rows, _ = await world.items.page(world.a, root_only, None, start_at, size)
    return [row.name for row in rows]


async def walked(world: World, start_at: int, size: int, root_only: bool = False) -> list[str]:
    """The page found by walking to it (nothing known)."""
    kept = world.items.positions
    world.items.positions = Positions()
    try:
        return await names(world, start_at, size, root_only)
    finally:
        world.items.positions = kept


class Counting(Positions):
    def __init__(self) -> None:
        super().__init__()
        self.hits = 0

    def find(self, key: Key) -> Place | None:
        place = super().find(key)
        self.hits += place is not None
        return place


async def test_paging_through_uses_where_the_last_page_ended(world: World) -> None:
    folders = [await world.item(f"F{f}") for f in range(3)]
    for n in range(24):
        await world.item(f"R{n}", parent=folders[n % 3])
    counting = Counting()
    world.items.positions = counting
    pages = [await names(world, start, 5) for start in range(0, 30, 5)]
    assert counting.hits == 5  # every page after the first
    assert pages == [await walked(world, start, 5) for start in range(0, 30, 5)]
    assert sum(len(p) for p in pages) == 27
    # The same page again, and a page of the root items.
    assert await names(world, 10, 5) == pages[2]
    assert counting.hits == 6
    assert await names(world, 1, 2, root_only=True) == ["F1", "F2"]


async def test_a_write_to_the_project_makes_known_places_unused(world: World) -> None:
    first = await world.item("first")
    for n in range(8):
        await world.item(f"R{n}")
    before = [await names(world, start, 3) for start in (0, 3, 6)]
    assert before == [["first", "R0", "R1"], ["R2", "R3", "R4"], ["R5", "R6", "R7"]]
    # A new item under the first one moves every later item one place on; the later
    # pages are asked for first, before page 0 could tell them where they begin now.
    await world.item("inserted", parent=first)
    after = [await names(world, start, 3) for start in (6, 3, 0)]
    assert after == [["R4", "R5", "R6"], ["R1", "R2", "R3"], ["first", "inserted", "R0"]]
    with acting_as(ADMIN):
        await world.items.delete(first)
    assert await names(world, 3, 3) == ["R3", "R4", "R5"]
    assert await names(world, 3, 3) == await walked(world, 3, 3)


def test_the_least_recently_used_place_goes_first() -> None:
    positions = Positions(size=2)
    keys: list[Any] = [Key(1, False, 0, n) for n in range(3)]
    positions.keep(keys[0], Place(False, 10))
    positions.keep(keys[1], Place(False, 20))
    assert positions.find(keys[0]) == Place(False, 10)
    positions.keep(keys[2], Place(False, 30))
    assert positions.find(keys[1]) is None
    assert positions.find(keys[0]) == Place(False, 10)
