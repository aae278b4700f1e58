"""Relationships' events: each names its to-item's project, so that the activity feed can
leave out a relationship into a project its reader may not read."""

from __future__ import annotations

from plumbline.services.items.foreign import Subject
from plumbline.services.items.idspace import IdSpace
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.items.conftest import World


async def test_every_relationship_event_names_the_to_items_project(world: World) -> None:
    mine = await world.item("Mine")
    other = await world.item("Other")
    theirs = await world.item("Theirs", project=world.b)
    run, _ = await IdSpace(world.db).allocate("testmgmt")  # a test run of project B
    mark = await world.last_event()
    with acting_as(ADMIN):
        rel = await world.relationships.create(mine, theirs, None)
        await world.relationships.clear_suspect(rel)
        await world.relationships.update(rel, mine, other, None)
        await world.relationships.update(
            rel, mine, run, None, {run: Subject(run, world.b, "test run", foreign=True)}
        )
        await world.relationships.delete(rel)
    events = await world.events_after(mark)
    assert [(e.type, e.project, e.payload["toItem"], e.payload["toProject"]) for e in events] == [
        ("items.relationship.created", world.a, theirs, world.b),
        ("items.relationship.updated", world.a, theirs, world.b),
        ("items.relationship.updated", world.a, other, world.a),
        ("items.relationship.updated", world.a, run, world.b),
        ("items.relationship.deleted", world.a, run, world.b),
    ]
