"""Each project's kept count of active items (``projects.active_items``, what a list's
totalResults reads) against a count of its items, after every kind of write."""

from __future__ import annotations

from collections.abc import AsyncIterator

from sqlalchemy import func, select

from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.imports import Importer
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.models import items, projects
from plumbline.services.items.restore import Restore
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.items.conftest import World


async def kept_and_counted(world: World) -> dict[int, tuple[int, int]]:
    """Project -> (kept count, active items counted), for projects A and B."""
    async with world.db.read() as session:
        kept: dict[int, int] = dict(
            (await session.execute(select(projects.c.id, projects.c.active_items))).all()
        )
        counted: dict[int, int] = dict(
            (
                await session.execute(
                    select(items.c.project, func.count())
                    .where(items.c.active.is_(True))
                    .group_by(items.c.project)
                )
            ).all()
        )
    return {p: (kept[p], counted.get(p, 0)) for p in (world.a, world.b)}


async def body(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def test_the_kept_count_follows_every_write(world: World) -> None:
    domain = world.items
    restore = Restore(world.db, domain.outbox, domain.config, domain.access)
    importer = Importer(domain, IdSpace(world.db))
    steps: list[tuple[str, dict[int, tuple[int, int]]]] = []

    async def step(name: str) -> None:
        steps.append((name, await kept_and_counted(world)))

    root = await world.item("root")
    child = await world.item("child", parent=root)
    await world.item("grandchild", parent=child)
    await step("created one by one")
    with acting_as(ADMIN):
        await domain.create_many(
            [
                ItemInput(project=p, item_type=world.types["REQ"], fields={"name": f"b{n}"})
                for n, p in enumerate([world.a, world.b, world.a, world.a, world.b])
            ]
        )
        await step("created in a batch over two projects")
        await importer.run(
            world.a,
            body(b'{"itemType": "REQ", "fields": {"name": "i1"}}\n'
                 b'{"itemType": "REQ", "fields": {"name": "i2"}}\n'),
        )  # fmt: skip
        await step("imported")
        await domain.delete(child)
        await step("deleted a subtree")
        await restore.restore(child, [])
        await step("restored its root")
        await world.moves.to_project(root, world.b)
        await step("moved a subtree to another project")
    assert [(name, counts) for name, counts in steps] == [
        (name, {p: (real, real) for p, (_, real) in counts.items()}) for name, counts in steps
    ]
    assert steps[-1][1][world.a][1] == 5  # 3 batch, 2 imported; root and child moved away
