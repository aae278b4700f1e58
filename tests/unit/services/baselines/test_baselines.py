"""Baselines: taking one, and comparing it with another or with its origin now (items
added, removed and changed with the fields that changed, then relationships)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

import pytest
from grpc import aio
from sqlalchemy import select, update

from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.common.access import Role
from plumbline.common.context import Principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, PermissionDenied, Unavailable
from plumbline.common.events import Event
from plumbline.common.rpc import Context
from plumbline.services.baselines.baselines import Baselines, Change, Origin
from plumbline.services.baselines.history import History
from plumbline.services.baselines.models import baseline_items, baselines, outbox
from tests.unit.services.baselines.conftest import PROJECT, SHORT, Owner
from tests.unit.services.conftest import ADMIN, access_cache, acting_as, outbox_for
from tests.unit.services.serving import serving


@dataclass
class FakeBaselining(items_pb2_grpc.BaseliningServicer):
    """The items service's ``ListMembers``: answers ``members`` (id, version, parent),
    in that order, and keeps the requests."""

    members: list[tuple[int, int, int | None]] = field(default_factory=list)
    requests: list[items_pb2.MembersRequest] = field(default_factory=list)

    async def ListMembers(
        self, request: items_pb2.MembersRequest, context: Context
    ) -> items_pb2.MemberList:
        self.requests.append(request)
        return items_pb2.MemberList(
            members=[
                items_pb2.Member(
                    id=item,
                    version=version,
                    project=request.project,
                    sequence=f"{n + 1}",
                    parent_item=parent,
                    parent_version=1 if parent else 0,
                )
                for n, (item, version, parent) in enumerate(self.members)
            ]
        )


@pytest.fixture
async def items() -> AsyncIterator[tuple[FakeBaselining, Callable[[], aio.Channel]]]:
    fake = FakeBaselining()
    async with serving("items", items_pb2_grpc.add_BaseliningServicer_to_server, fake) as ch:
        yield fake, ch


@pytest.fixture
def fake(items: tuple[FakeBaselining, Callable[[], aio.Channel]]) -> FakeBaselining:
    return items[0]


@pytest.fixture
def store(
    baselines_db: Database,
    history: History,
    items: tuple[FakeBaselining, Callable[[], aio.Channel]],
) -> Baselines:
    return Baselines(
        baselines_db, outbox_for(baselines_db, "baselines"), history, items[1], access_cache()
    )


async def _take(
    store: Baselines,
    fake: FakeBaselining,
    members: list[tuple[int, int, int | None]],
    at: datetime,
    origin: Origin | None = None,
    project: int = PROJECT,
) -> int:
    """A baseline of ``members``, dated ``at``."""
    fake.members = members
    with acting_as(ADMIN):
        baseline = await store.create(project, "B", "", origin or Origin())
    async with store.db.transaction() as session:
        await session.execute(
            update(baselines).where(baselines.c.id == baseline).values(created_at=at)
        )
    return baseline


NOW = utcnow()  # UTC, as the services date everything
T1 = NOW - timedelta(minutes=50)  # baseline A
T2 = NOW - timedelta(minutes=20)  # baseline B

#: A: items 1 (v1), 2 (v1), 3 (v2, under 1), 4 (v1).
A_MEMBERS: list[tuple[int, int, int | None]] = [(1, 1, None), (2, 1, None), (3, 2, 1), (4, 1, 2)]
#: B: 3 changed and first now, 2 as it was, 5 new, 1 changed, 6 new; 4 gone.
B_MEMBERS: list[tuple[int, int, int | None]] = [
    (3, 3, None),
    (2, 1, None),
    (5, 1, 2),
    (1, 2, None),
    (6, 1, None),
]


async def _histories(owner: Owner) -> None:
    """The versions the compares read: what changed in 1, 2 and 3."""
    await owner.version(1, 1, "Login", {"priority": "High", "status": "Draft"})
    await owner.version(1, 2, "Log in", {"priority": "Low", "status": "Draft"})
    await owner.version(2, 1, "Logout")
    await owner.version(2, 2, "Log out")
    await owner.version(3, 1, "Session", {"status": "New"})
    await owner.version(3, 2, "Session", {"status": "Draft"})
    await owner.version(3, 3, "Session", {"status": "Approved", "owner": "kim"})


async def _relationships(owner: Owner) -> None:
    """Relationships over time around A (T1) and B (T2)."""
    t0 = T1 - timedelta(minutes=10)
    between = T1 + timedelta(minutes=10)
    await owner.relationship("created", 10, 1, 2, t0)  # throughout: never reported
    await owner.relationship("updated", 10, 1, 2, between)  # same ends and type: no change
    await owner.relationship("created", 11, 1, 4, t0)
    await owner.relationship("deleted", 11, 1, 4, between)  # gone by B
    await owner.relationship("created", 12, 2, 5, between)  # new by B
    await owner.relationship("created", 13, 98, 99, between)  # items in neither baseline
    await owner.relationship("created", 14, 2, 3, between, project=8)  # another project
    await owner.relationship("created", 16, 3, 1, t0, rel_type=3)
    await owner.relationship("updated", 16, 3, 1, between, rel_type=4)  # its type changed
    await owner.relationship("created", 15, 1, 7, NOW - timedelta(minutes=10))  # after B


def _rel(
    change: Literal["ADDED", "REMOVED"], rel: int, from_item: int, to_item: int, rel_type: int = 3
) -> Change:
    return Change(
        "RELATIONSHIP",
        change,
        rel,
        from_item=from_item,
        to_item=to_item,
        relationship_type=rel_type,
    )


#: A to B: changed items first (in B's order) with the fields that changed, then added
#: (in B's order), removed (in A's), then relationships added and removed (by id).
A_TO_B = [
    Change("ITEM", "CHANGED", 3, 2, 3, ["owner", "status"]),
    Change("ITEM", "CHANGED", 1, 1, 2, ["name", "priority"]),
    Change("ITEM", "ADDED", 5, 0, 1),
    Change("ITEM", "ADDED", 6, 0, 1),
    Change("ITEM", "REMOVED", 4, 1, 0),
    _rel("ADDED", 12, 2, 5),
    _rel("ADDED", 16, 3, 1, rel_type=4),
    _rel("REMOVED", 11, 1, 4),
    _rel("REMOVED", 16, 3, 1),
]


async def test_compare_two_baselines_lists_item_then_relationship_changes(
    store: Baselines, fake: FakeBaselining, owner: Owner
) -> None:
    await _histories(owner)
    await _relationships(owner)
    a = await _take(store, fake, A_MEMBERS, T1)
    b = await _take(store, fake, B_MEMBERS, T2)
    with acting_as(ADMIN):
        changes, total = await store.compare(a, b, 0, 100)
    assert changes == A_TO_B
    assert total == len(A_TO_B)


async def test_compare_pages_the_changes_and_names_the_fields_of_the_page_only(
    store: Baselines, fake: FakeBaselining, owner: Owner
) -> None:
    await _histories(owner)
    await _relationships(owner)
    a = await _take(store, fake, A_MEMBERS, T1)
    b = await _take(store, fake, B_MEMBERS, T2)
    with acting_as(ADMIN):
        assert await store.compare(a, b, 1, 1) == ([A_TO_B[1]], 9)
        assert await store.compare(a, b, 3, 4) == (A_TO_B[3:7], 9)
        assert await store.compare(a, b, 9, 5) == ([], 9)
    # The other way round, what was added is removed and the changes go back.
    with acting_as(ADMIN):
        back, total = await store.compare(b, a, 0, 5)
    assert total == 9
    assert back == [
        Change("ITEM", "CHANGED", 1, 2, 1, ["name", "priority"]),
        Change("ITEM", "CHANGED", 3, 3, 2, ["owner", "status"]),
        Change("ITEM", "ADDED", 4, 0, 1),
        Change("ITEM", "REMOVED", 5, 1, 0),
        Change("ITEM", "REMOVED", 6, 1, 0),
    ]


async def test_compare_with_the_origin_now_asks_items_for_its_members(
    store: Baselines, fake: FakeBaselining, owner: Owner
) -> None:
    await _histories(owner)
    await _relationships(owner)
    a = await _take(store, fake, A_MEMBERS, T1, Origin(item=1))
    fake.members = [(1, 2, None), (2, 2, None), (7, 1, 1)]
    with acting_as(ADMIN):
        changes, total = await store.compare(a, None, 0, 100)
    assert fake.requests[-1] == items_pb2.MembersRequest(project=PROJECT, item=1)
    assert changes == [
        Change("ITEM", "CHANGED", 1, 1, 2, ["name", "priority"]),
        Change("ITEM", "CHANGED", 2, 1, 2, ["name"]),
        Change("ITEM", "ADDED", 7, 0, 1),
        Change("ITEM", "REMOVED", 3, 2, 0),
        Change("ITEM", "REMOVED", 4, 1, 0),
        _rel("ADDED", 12, 2, 5),
        _rel("ADDED", 15, 1, 7),
        _rel("ADDED", 16, 3, 1, rel_type=4),
        _rel("REMOVED", 11, 1, 4),
        _rel("REMOVED", 16, 3, 1),
    ]
    assert total == 10


async def test_a_reader_sees_no_relationship_into_a_project_it_may_not_read(
    baselines_db: Database,
    items: tuple[FakeBaselining, Callable[[], aio.Channel]],
    store: Baselines,
    fake: FakeBaselining,
    owner: Owner,
) -> None:
    await owner.version(1, 1, project=PROJECT)
    await owner.version(2, 1, project=PROJECT)
    await owner.version(90, 1, project=9)
    between = T1 + timedelta(minutes=10)
    await owner.relationship("created", 20, 1, 2, between)
    await owner.relationship("created", 21, 1, 90, between)  # into project 9
    await owner.relationship("created", 22, 2, 91, between)  # 91: no history yet
    a = await _take(store, fake, [(1, 1, None)], T1)
    b = await _take(store, fake, [(1, 1, None), (2, 1, None)], T2)
    reader = Principal(2, "reader")
    cache = access_cache({2: {PROJECT: Role.READ_ONLY}})
    history = History(baselines_db, store.history.inbox, SHORT, cache)
    theirs = Baselines(baselines_db, store.outbox, history, items[1], cache)
    with acting_as(ADMIN):
        everything, _ = await store.compare(a, b, 0, 10)
        assert [c.id for c in everything if c.kind == "RELATIONSHIP"] == [20, 21, 22]
        assert [r.id for r in (await store.history.relationships_at(1, 1, T2, 0, 10))[0]] == [
            20,
            21,
        ]
    with acting_as(reader):
        changes, total = await theirs.compare(a, b, 0, 10)
        assert [c.id for c in changes if c.kind == "RELATIONSHIP"] == [20]
        assert total == 2  # item 2 added, relationship 20 added
        found, total = await history.relationships_at(1, 1, T2, 0, 10)
        assert ([r.id for r in found], total) == ([20], 1)
        found, total = await theirs.relationships(b, 1, 0, 10)
        assert ([r.id for r in found], total) == ([20], 1)


async def test_compare_of_identical_states_is_empty(
    store: Baselines, fake: FakeBaselining, owner: Owner
) -> None:
    await _histories(owner)
    a = await _take(store, fake, A_MEMBERS, T1)
    b = await _take(store, fake, A_MEMBERS, T2)
    with acting_as(ADMIN):
        assert await store.compare(a, b, 0, 10) == ([], 0)


async def test_compare_refuses_a_baseline_of_another_project(
    store: Baselines, fake: FakeBaselining
) -> None:
    a = await _take(store, fake, A_MEMBERS, T1)
    other = await _take(store, fake, A_MEMBERS, T2, project=PROJECT + 1)
    with acting_as(ADMIN), pytest.raises(InvalidArgument) as refused:
        await store.compare(a, other, 0, 10)
    assert str(refused.value) == (
        f"to: baseline {other} is of project {PROJECT + 1}; compare baselines of project {PROJECT}."
    )


async def test_compare_waits_for_versions_the_history_has_not_received(
    store: Baselines, fake: FakeBaselining, owner: Owner
) -> None:
    store.history.consistency_wait = SHORT
    await owner.version(1, 1, "Login")
    a = await _take(store, fake, [(1, 1, None)], T1)
    b = await _take(store, fake, [(1, 2, None)], T2)
    with acting_as(ADMIN), pytest.raises(Unavailable) as late:
        await store.compare(a, b, 0, 10)
    assert str(late.value) == "The history is catching up with recent changes; try again shortly."
    await owner.version(1, 2, "Log in")
    with acting_as(ADMIN):
        assert await store.compare(a, b, 0, 10) == (
            [Change("ITEM", "CHANGED", 1, 1, 2, ["name"])],
            1,
        )


async def test_create_keeps_the_members_in_tree_order_with_their_parents(
    store: Baselines, fake: FakeBaselining
) -> None:
    fake.members = A_MEMBERS
    with acting_as(ADMIN):
        baseline = await store.create(PROJECT, "  Release 1 ", "first", Origin(release=9))
    assert fake.requests == [items_pb2.MembersRequest(project=PROJECT, release=9)]
    async with store.db.read() as session:
        row = (await session.execute(select(baselines))).one()
        kept = (
            await session.execute(select(baseline_items).order_by(baseline_items.c.position))
        ).all()
        [body] = (await session.scalars(select(outbox.c.body))).all()
    assert (row.name, row.description, row.origin_release) == ("Release 1", "first", 9)
    assert [(r.item, r.version, r.position, r.parent_item) for r in kept] == [
        (1, 1, 0, None),
        (2, 1, 1, None),
        (3, 2, 2, 1),
        (4, 1, 3, 2),
    ]
    event = Event.from_json(body)
    assert (event.type, event.object_ids, event.payload) == (
        "baselines.baseline.created",
        [baseline],
        {"name": "Release 1", "items": 4},
    )


async def test_create_refuses_a_blank_name_and_a_reader(
    store: Baselines, fake: FakeBaselining
) -> None:
    with acting_as(ADMIN), pytest.raises(InvalidArgument) as blank:
        await store.create(PROJECT, "  ", "", Origin())
    assert str(blank.value) == "name is required and must not be blank."
    with acting_as(Principal(5, "reader", frozenset())), pytest.raises(PermissionDenied):
        await store.create(PROJECT, "B", "", Origin())
    assert fake.requests == []
