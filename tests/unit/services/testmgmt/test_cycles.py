"""Regenerating a cycle's runs when it changes: runs of the cases it still includes keep
their results, moved ones get a new version, new cases get runs, the others go; and which
runs a generation config asks for."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from plumbline.common.errors import InvalidArgument
from plumbline.common.events import Event
from plumbline.services.testmgmt import store
from plumbline.services.testmgmt.api.messages import record_message
from plumbline.services.testmgmt.models import outbox
from tests.unit.services.conftest import ADMIN, acting_as
from tests.unit.services.testmgmt.conftest import CYCLE, Domain


def _cases(testmgmt: Domain, *ids: int) -> None:
    for case in ids:
        testmgmt.items.add_case(case, f"Case {case}", steps=1)


async def _events_after(testmgmt: Domain, last: int) -> list[tuple[str, int, int]]:
    """(type, object, version) of the events written after outbox row ``last``."""
    async with testmgmt.db.read() as session:
        bodies = (
            await session.scalars(
                select(outbox.c.body).where(outbox.c.id > last).order_by(outbox.c.id)
            )
        ).all()
    events = [Event.from_json(b) for b in bodies]
    return [(e.type, e.object_ids[0], e.version) for e in events]


async def _last_event(testmgmt: Domain) -> int:
    async with testmgmt.db.read() as session:
        return int(await session.scalar(select(outbox.c.id).order_by(outbox.c.id.desc())) or 0)


async def _places(testmgmt: Domain, cycle: int) -> dict[tuple[int, int], Any]:
    """A cycle's runs by (group, test case)."""
    return {(r.test_group, r.test_case): r for r in await testmgmt.runs_of(cycle)}


async def test_a_new_cycle_has_a_run_per_case_of_each_group_in_order(testmgmt: Domain) -> None:
    _cases(testmgmt, 101, 102, 103)
    plan, groups = await testmgmt.plan({"Default": [102, 101], "Smoke": [101, 103]})
    cycle = await testmgmt.cycle(plan)
    runs = await testmgmt.runs_of(cycle)
    d, s = groups["Default"], groups["Smoke"]
    assert [(r.document_key, r.test_group, r.test_case, r.sort_order) for r in runs] == [
        ("P3-TSTRN-1", d, 102, 0),
        ("P3-TSTRN-2", d, 101, 1),
        ("P3-TSTRN-3", s, 101, 0),
        ("P3-TSTRN-4", s, 103, 1),
    ]
    assert json.loads(runs[0].fields_json) == {
        "name": "Case 102",
        "testRunSteps": [
            {
                "action": "do 0",
                "expectedResult": "see 0",
                "notes": "",
                "status": "NOT_RUN",
                "result": "",
            }
        ],
    }


async def test_regeneration_keeps_results_moves_adds_and_removes_runs(testmgmt: Domain) -> None:
    _cases(testmgmt, 101, 102, 103, 104, 105)
    plan, groups = await testmgmt.plan({"Default": [101, 102, 105], "Smoke": [103]})
    d, s = groups["Default"], groups["Smoke"]
    cycle = await testmgmt.cycle(plan)
    before = await _places(testmgmt, cycle)
    await testmgmt.execute({before[(d, 101)].id: "PASSED"})
    with acting_as(ADMIN):
        await testmgmt.groups.remove_case(plan, d, 102)  # 105 moves up to 1
        await testmgmt.groups.add_case(plan, d, 104)
        await testmgmt.groups.add_case(plan, s, 101)
    last = await _last_event(testmgmt)
    with acting_as(ADMIN):
        await testmgmt.cycles.update(cycle, {**CYCLE, "name": "Cycle again"}, b"")
    after = await _places(testmgmt, cycle)
    assert sorted(after) == sorted([(d, 101), (d, 105), (d, 104), (s, 103), (s, 101)])
    kept = after[(d, 101)]
    assert (kept.id, kept.status, kept.version) == (before[(d, 101)].id, "PASSED", 2)
    assert after[(s, 103)].id == before[(s, 103)].id
    assert after[(s, 103)].version == 1
    moved = after[(d, 105)]
    assert (moved.id, moved.sort_order, moved.version) == (before[(d, 105)].id, 1, 2)
    # New runs: next keys, in wanted order (group order, then case order).
    assert (after[(d, 104)].document_key, after[(d, 104)].sort_order) == ("P3-TSTRN-5", 2)
    assert (after[(s, 101)].document_key, after[(s, 101)].sort_order) == ("P3-TSTRN-6", 1)
    fields = await testmgmt.fields(cycle)
    assert fields["name"] == "Cycle again"
    assert await _events_after(testmgmt, last) == [
        ("testmgmt.testcycle.updated", cycle, 2),
        ("testmgmt.testrun.deleted", before[(d, 102)].id, 2),
        ("testmgmt.testrun.updated", moved.id, 2),
        ("testmgmt.testrun.created", after[(d, 104)].id, 1),
        ("testmgmt.testrun.created", after[(s, 101)].id, 1),
    ]


async def test_regeneration_follows_a_new_config_and_keeps_the_stored_one(
    testmgmt: Domain,
) -> None:
    _cases(testmgmt, 101, 102, 103)
    plan, groups = await testmgmt.plan({"Default": [101], "Smoke": [102]})
    d, s = groups["Default"], groups["Smoke"]
    cycle = await testmgmt.cycle(plan)
    config = json.dumps({"testGroupsToInclude": [s]}).encode()
    with acting_as(ADMIN):
        await testmgmt.cycles.update(cycle, CYCLE, config)
    assert sorted(await _places(testmgmt, cycle)) == [(s, 102)]
    # Without a config the stored one applies: Default's new case gets no run.
    with acting_as(ADMIN):
        await testmgmt.groups.add_case(plan, d, 103)
        await testmgmt.groups.add_case(plan, s, 103)
        await testmgmt.cycles.update(cycle, CYCLE, b"")
    assert sorted(await _places(testmgmt, cycle)) == [(s, 102), (s, 103)]


async def test_a_case_items_no_longer_answers_for_gets_no_run(testmgmt: Domain) -> None:
    _cases(testmgmt, 101, 102)
    plan, groups = await testmgmt.plan({"Default": [101, 102]})
    d = groups["Default"]
    del testmgmt.items.cases[102]  # deleted, or no longer readable
    cycle = await testmgmt.cycle(plan)
    assert sorted(await _places(testmgmt, cycle)) == [(d, 101)]
    # It comes back: the next regeneration makes its run, at its place in the group.
    _cases(testmgmt, 102)
    with acting_as(ADMIN):
        await testmgmt.cycles.update(cycle, CYCLE, b"")
    assert (await _places(testmgmt, cycle))[(d, 102)].sort_order == 1


async def test_a_config_naming_another_plans_group_is_refused(testmgmt: Domain) -> None:
    _cases(testmgmt, 101)
    plan, groups = await testmgmt.plan({"Default": [101], "Smoke": []})
    cycle = await testmgmt.cycle(plan)
    config = json.dumps({"testGroupsToInclude": [groups["Smoke"], 999, 998]}).encode()
    with acting_as(ADMIN), pytest.raises(InvalidArgument) as refused:
        await testmgmt.cycles.update(cycle, CYCLE, config)
    assert str(refused.value) == (
        "testRunGenerationConfig.testGroupsToInclude: 999, 998 are not a test group of "
        f"test plan {plan}; its groups are: {groups['Default']}, {groups['Smoke']}."
    )
    assert len(await testmgmt.runs_of(cycle)) == 1


async def test_statuses_to_include_follow_the_previous_cycle(testmgmt: Domain) -> None:
    _cases(testmgmt, 101, 102, 103)
    plan, groups = await testmgmt.plan({"Default": [101, 102, 103]})
    d = groups["Default"]
    statuses = {"testRunStatusesToInclude": ["FAILED", "NOT_RUN"]}
    with pytest.raises(InvalidArgument) as first:
        await testmgmt.cycle(plan, statuses)
    assert str(first.value) == (
        "testRunGenerationConfig.testRunStatusesToInclude needs a previous test cycle; "
        f"test plan {plan} has none before this one."
    )
    one = await testmgmt.cycle(plan)
    runs = await _places(testmgmt, one)
    await testmgmt.execute({runs[(d, 101)].id: "PASSED", runs[(d, 102)].id: "FAILED"})
    two = await testmgmt.cycle(plan, statuses)
    assert sorted(await _places(testmgmt, two)) == [(d, 102), (d, 103)]


async def test_a_cycle_shows_its_plan_in_fields_and_ignores_it_sent_back(
    testmgmt: Domain,
) -> None:
    plan, _ = await testmgmt.plan({"Default": []})
    cycle = await testmgmt.cycle(plan)
    with acting_as(ADMIN):
        access = await testmgmt.cycles.access.current()
        await testmgmt.cycles.update(cycle, {**CYCLE, "testPlan": plan + 1}, b"")
    async with testmgmt.db.read() as session:
        row = await store.load(session, cycle, "cycle", access)
    message = record_message(row, await testmgmt.items.catalog(), False, access)
    assert json.loads(message.fields_json)["testPlan"] == plan
    assert "testPlan" not in await testmgmt.fields(cycle), "shown, not stored"
