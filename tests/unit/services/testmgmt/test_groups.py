"""Test cases added to a group many at a time: in order, after those already there, each
announced as a single add announces it, and all of them or none."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import select

from plumbline.common.errors import AlreadyExists, InvalidArgument, NotFound
from plumbline.common.events import Event
from plumbline.services.testmgmt.models import outbox
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.testmgmt.conftest import PROJECT, Domain


async def _cases_of(testmgmt: Domain, plan: int, group: int) -> list[int]:
    with acting_as(ADMIN):
        ids, total = await testmgmt.groups.list_cases(plan, group, 0, 100)
    assert total == len(ids)
    return ids


async def _added(testmgmt: Domain) -> list[tuple[str, int, int]]:
    """(type, plan, test case) of every test case added, as the outbox holds them."""
    async with testmgmt.db.read() as session:
        bodies = (await session.scalars(select(outbox.c.body).order_by(outbox.c.id))).all()
    events = [Event.from_json(b) for b in bodies]
    return [
        (e.type, e.object_ids[0], e.payload["testCaseAdded"])
        for e in events
        if "testCaseAdded" in e.payload
    ]


async def test_a_batch_lands_in_order_after_the_cases_there(testmgmt: Domain) -> None:
    for case in (101, 102, 103, 104):
        testmgmt.items.add_case(case, f"Case {case}")
    plan, groups = await testmgmt.plan({"Default": [102]})
    group = groups["Default"]
    with acting_as(ADMIN):
        await testmgmt.groups.add_cases(plan, group, [104, 101, 103])
    assert await _cases_of(testmgmt, plan, group) == [102, 104, 101, 103]
    # As four single adds would have announced them, in the same order.
    assert await _added(testmgmt) == [
        ("testmgmt.testgroup.updated", plan, case) for case in (102, 104, 101, 103)
    ]
    # One lookup of the test cases for the whole batch.
    assert testmgmt.items.asked[-1] == [104, 101, 103]


@pytest.mark.parametrize(
    ("batch", "error", "named"),
    [
        ([101, 999], NotFound, "999"),
        ([101, 102, 101], InvalidArgument, "101 given more than once"),
        ([101, 103], AlreadyExists, "103 already exists"),
        ([101, 777], InvalidArgument, "777 is of item type"),
        ([101, 555], InvalidArgument, "555 is in project"),
        ([], InvalidArgument, "at least one"),
    ],
)
async def test_a_batch_with_one_bad_case_adds_none(
    testmgmt: Domain, batch: list[int], error: type[Exception], named: str
) -> None:
    for case in (101, 102, 103):
        testmgmt.items.add_case(case, f"Case {case}")
    testmgmt.items.add_case(555, "Elsewhere")
    elsewhere = testmgmt.items.cases[555]
    testmgmt.items.cases[555] = replace(elsewhere, project=PROJECT + 1)
    catalog = await testmgmt.items.catalog()
    requirement = catalog.by_key("REQ")
    assert requirement is not None
    testmgmt.items.cases[777] = replace(testmgmt.items.cases[101], id=777, item_type=requirement.id)
    plan, groups = await testmgmt.plan({"Default": [103]})
    group = groups["Default"]
    before = await _added(testmgmt)
    with acting_as(ADMIN), pytest.raises(error, match=named):
        await testmgmt.groups.add_cases(plan, group, batch)
    assert await _cases_of(testmgmt, plan, group) == [103]
    assert await _added(testmgmt) == before


async def test_cases_already_there_are_named(testmgmt: Domain) -> None:
    for case in (101, 102, 103):
        testmgmt.items.add_case(case, f"Case {case}")
    plan, groups = await testmgmt.plan({"Default": [101, 102]})
    with acting_as(ADMIN), pytest.raises(AlreadyExists, match="101, 102 already exist"):
        await testmgmt.groups.add_cases(plan, groups["Default"], [103, 102, 101])
