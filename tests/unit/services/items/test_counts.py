"""Each project's kept count of active items (``projects.active_items``, what a list's
totalResults reads) against a count of its items, after every kind of write."""

from __future__ import annotations

from collections.abc import AsyncIterator
from itertools import pairwise
from typing import Any

from sqlalchemy import func, select

from plumbline.services.items import tree
from plumbline.services.items.foreign import Subject, forget
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.imports import Importer
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.models import items, projects, relationships
from plumbline.services.items.restore import Restore
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.items.conftest import World


async def kept_and_counted(
    world: World, kept_column: Any = projects.c.active_items, table: Any = items
) -> dict[int, tuple[int, int]]:
    """Project -> (kept count, rows counted), for projects A and B: active items, or
    (``relationships``) visible relationships."""
    shown = table.c.active if table is items else table.c.visible
    async with world.db.read() as session:
        kept: dict[int, int] = dict(
            (await session.execute(select(projects.c.id, kept_column))).all()
        )
        counted: dict[int, int] = dict(
            (
                await session.execute(
                    select(table.c.project, func.count())
                    .where(shown.is_(True))
                    .group_by(table.c.project)
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


async def test_the_kept_relationship_count_follows_every_write(world: World) -> None:
    domain, rels = world.items, world.relationships
    restore = Restore(world.db, domain.outbox, domain.config, domain.access)
    importer = Importer(domain, IdSpace(world.db))
    steps: list[tuple[str, dict[int, tuple[int, int]]]] = []

    async def step(name: str) -> None:
        counts = await kept_and_counted(world, projects.c.visible_relationships, relationships)
        steps.append((name, counts))

    root = await world.item("root")
    child = await world.item("child", parent=root)
    leaf = await world.item("leaf", parent=child)
    other = await world.item("other")
    in_b = await world.item("in B", project=world.b)
    run, _ = await IdSpace(world.db).allocate("testmgmt")  # a test run of project B
    as_run = {run: Subject(run, world.b, "test run", foreign=True)}
    with acting_as(ADMIN):
        first = await rels.create(root, other, None)
        await rels.create_many([(child, other, None), (in_b, leaf, None), (other, in_b, None)])
        await rels.create(other, run, None, as_run)
        await rels.create(run, other, None, as_run)
        await step("created")
        await rels.update(first, in_b, root, None)
        await step("moved to project B by a new from-item")
        await rels.delete(first)
        await step("deleted")
        await importer.run(
            world.a,
            body(b'{"key": "I", "itemType": "REQ", "fields": {"name": "i"}}\n'
                 b'{"fromItem": "I", "toItem": ' + str(other).encode() + b"}\n"
                 b'{"fromItem": ' + str(in_b).encode() + b', "toItem": "I"}\n'),
        )  # fmt: skip
        await step("imported")
        await domain.delete(child)
        await step("hidden with a deleted subtree")
        await restore.restore(child, [])
        await step("shown again by a restore")
        await world.moves.to_project(root, world.b)
        await step("carried along to another project")
        async with world.db.transaction() as session:
            await forget(session, [run])
        await step("gone with a deleted test run")
    assert [(name, counts) for name, counts in steps] == [
        (name, {p: (real, real) for p, (_, real) in counts.items()}) for name, counts in steps
    ]
    # Every step changed a count: each kind of write was exercised.
    assert all(a[1] != b[1] for a, b in pairwise(steps)), steps


async def test_a_project_lists_its_relationship_count_from_the_kept_count(world: World) -> None:
    one = await world.item("one")
    two = await world.item("two")
    with acting_as(ADMIN):
        await world.relationships.create(one, two, None)
        async with world.db.transaction() as session:  # a kept count that disagrees shows
            await tree.count_relationships(session, {world.a: 41})
        rows, total = await world.relationships.page(world.a, None, False, 0, 20)
    assert (len(rows), total) == (1, 42)
