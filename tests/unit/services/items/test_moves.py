"""Places in the tree: an item moved within its project (its children follow, the peer
decides its place) or to another project (new keys, project-bound values dropped), and
the moves refused, with their messages."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from plumbline.common.errors import InvalidArgument, PermissionDenied
from plumbline.services.items.models import item_tags, relationships
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.items.conftest import WRITER_OF_A, World


async def _outline(world: World) -> dict[str, int]:
    """One [C1, C2 [G1], C3], Two, Three in project A: their ids by name."""
    one = await world.item("One")
    ids = {"One": one}
    for name in ("C1", "C2", "C3"):
        ids[name] = await world.item(name, one)
    ids["G1"] = await world.item("G1", ids["C2"])
    ids["Two"] = await world.item("Two")
    ids["Three"] = await world.item("Three")
    return ids


async def test_an_item_moves_under_a_parent_after_a_peer_with_its_children(
    world: World,
) -> None:
    ids = await _outline(world)
    last = await world.last_event()
    with acting_as(ADMIN):
        await world.moves.within_project(ids["C2"], ids["Two"], None, None)
        await world.moves.within_project(ids["Three"], ids["One"], None, ids["C1"])
    assert await world.tree(world.a) == [
        ("1", "One"),
        ("1.1", "C1"),
        ("1.2", "Three"),
        ("1.3", "C3"),
        ("2", "Two"),
        ("2.1", "C2"),
        ("2.1.1", "G1"),
    ]
    rows = await world.rows(ids["C2"], ids["G1"], ids["Three"])
    assert (rows[ids["C2"]].parent, rows[ids["G1"]].parent) == (ids["Two"], ids["C2"])
    # The moved items get a new version; the children that followed do not.
    assert [rows[i].version for i in (ids["C2"], ids["G1"], ids["Three"])] == [2, 1, 2]
    events = await world.events_after(last)
    assert [(e.type, e.object_ids, e.version) for e in events] == [
        ("items.item.updated", [ids["C2"]], 2),
        ("items.item.updated", [ids["Three"]], 2),
    ]


async def test_without_a_peer_an_item_goes_first(world: World) -> None:
    ids = await _outline(world)
    with acting_as(ADMIN):
        await world.moves.within_project(ids["Three"], None, world.a, None)
        await world.moves.within_project(ids["C3"], ids["One"], None, None)
    assert [name for _, name in await world.tree(world.a)] == [
        "Three",
        "One",
        "C3",
        "C1",
        "C2",
        "G1",
        "Two",
    ]


async def test_moves_within_a_project_are_refused_with_their_reasons(world: World) -> None:
    ids = await _outline(world)
    other = await world.item("Elsewhere", project=world.b)
    refusals = [
        ((ids["C1"], None, None, None), "parent takes exactly one of item or project."),
        ((ids["C1"], ids["One"], world.a, None), "parent takes exactly one of item or project."),
        (
            (ids["C1"], ids["One"], None, ids["C1"]),
            "peer must be another item than the one being placed.",
        ),
        (
            (ids["C1"], None, world.b, None),
            f"parent.project {world.b} is not the item's project {world.a}; move between "
            "projects with PUT /items/{id}/location.",
        ),
        (
            (ids["One"], ids["G1"], None, None),
            "An item cannot be moved under itself or one of its children.",
        ),
        (
            (ids["One"], ids["One"], None, None),
            "An item cannot be moved under itself or one of its children.",
        ),
        (
            (ids["C1"], other, None, None),
            "location.parent.item is in another project; move between projects with "
            "PUT /items/{id}/location.",
        ),
        ((ids["C1"], 999_999, None, None), "location.parent.item: no item with id 999999."),
        (
            (ids["C1"], ids["One"], None, ids["Two"]),
            f"peer: item {ids['Two']} is not a child of item {ids['One']}.",
        ),
        (
            (ids["Two"], None, world.a, ids["C1"]),
            f"peer: item {ids['C1']} is not a child of the root of project {world.a}.",
        ),
    ]
    before = await world.tree(world.a)
    for (item, parent, project, peer), message in refusals:
        with acting_as(ADMIN), pytest.raises(InvalidArgument) as refused:
            await world.moves.within_project(item, parent, project, peer)
        assert str(refused.value) == message
    assert await world.tree(world.a) == before


async def test_an_item_moves_to_another_project_with_its_subtree(world: World) -> None:
    ids = await _outline(world)
    await world.item("B1", project=world.b)
    with acting_as(ADMIN):
        release = await world.releases.create("R1", "", None, world.a)
        tag = await world.tags.create("smoke", world.a)
        await world.items.patch(
            ids["G1"], [{"op": "add", "path": "/fields/release", "value": release}], False
        )
        await world.tags.tag_item(ids["C2"], tag)
        rel = await world.relationships.create(ids["G1"], ids["C1"], None)
    last = await world.last_event()
    with acting_as(ADMIN):
        work, moved = await world.moves.to_project(ids["C2"], world.b)
    assert len(work) == 36
    assert moved == [ids["C2"], ids["G1"]]
    # It goes to the bottom of B's root; A closes the gap it left.
    assert await world.tree(world.b) == [("1", "B1"), ("2", "C2"), ("2.1", "G1")]
    assert [s for s, _ in await world.tree(world.a)] == ["1", "1.1", "1.2", "2", "3"]
    rows = await world.rows(ids["C2"], ids["G1"])
    c2, g1 = rows[ids["C2"]], rows[ids["G1"]]
    assert (c2.project, c2.parent, c2.version, c2.document_key) == (world.b, None, 2, "MVB-REQ-2")
    assert (g1.project, g1.parent, g1.version, g1.document_key) == (
        world.b,
        ids["C2"],
        3,
        "MVB-REQ-3",
    )
    # Project-bound values stay behind: the release field and the tag.
    assert "release" not in json.loads(g1.fields_json)
    async with world.db.read() as session:
        assert (await session.scalars(select(item_tags.c.item))).all() == []
        moved_rel = await session.scalar(
            select(relationships.c.project).where(relationships.c.id == rel)
        )
    assert moved_rel == world.b
    events = await world.events_after(last)
    assert [(e.type, e.object_ids, e.project, e.payload["movedFrom"]) for e in events] == [
        ("items.item.updated", [ids["C2"]], world.b, world.a),
        ("items.item.updated", [ids["G1"]], world.b, world.a),
    ]


async def test_moves_to_another_project_are_refused_with_their_reasons(world: World) -> None:
    ids = await _outline(world)
    refusals = [
        (999, "location.parent.project: no project with id 999."),
        (world.folder, f"location.parent.project: project {world.folder} is a folder."),
        (
            world.a,
            "The item is already in that project; move it inside a project with "
            "PUT /items/{id} and location.parent.",
        ),
    ]
    for target, message in refusals:
        with acting_as(ADMIN), pytest.raises(InvalidArgument) as refused:
            await world.moves.to_project(ids["C2"], target)
        assert str(refused.value) == message
    # WRITE on both projects: this writer may only read B.
    with acting_as(WRITER_OF_A), pytest.raises(PermissionDenied):
        await world.moves.to_project(ids["C2"], world.b)
    assert (await world.rows(ids["C2"]))[ids["C2"]].project == world.a
