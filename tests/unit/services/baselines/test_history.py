"""The history's consistency waits (what they wait for, and their time-out answers), and
what a version changed, worked out whichever of two versions arrives first."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable

import pytest
from sqlalchemy import select

from plumbline.common.db import Database
from plumbline.common.errors import NotFound, Unavailable
from plumbline.common.events import Event
from plumbline.services.baselines.history import (
    History,
    change_details,
    changed_fields,
)
from plumbline.services.baselines.models import consumer_positions, histories, versions
from tests.unit.services.baselines.conftest import PROJECT, SHORT, WAIT, Owner, fields_json
from tests.unit.services.conftest import ADMIN, acting_as

CATCHING_UP = "The history is catching up with recent changes; try again shortly."


async def _later(seconds: float, work: Awaitable[object]) -> None:
    await asyncio.sleep(seconds)
    await work


# ---- caught_up: the sources' positions ------------------------------------------------


async def test_caught_up_returns_once_the_position_is_consumed(
    history: History, owner: Owner
) -> None:
    await owner.version(1, 1)
    await owner.version(1, 2)  # items at position 2
    await history.caught_up({"items": 2})
    # Position 3 arrives while the read waits: it returns then (the wait is 10 s).
    arriving = asyncio.create_task(_later(0.1, owner.version(1, 3)))
    began = time.monotonic()
    await history.caught_up({"items": 3})
    assert time.monotonic() - began < WAIT / 2
    await arriving


async def test_caught_up_sees_a_position_another_replica_consumed(
    history: History, baselines_db: Database
) -> None:
    # No event passed through this replica: the position is only in the database.
    async with baselines_db.transaction() as session:
        await session.execute(consumer_positions.insert().values(source="testmgmt", position=40))
    await history.caught_up({"testmgmt": 40})


async def test_caught_up_times_out_with_unavailable(history: History, owner: Owner) -> None:
    history.consistency_wait = SHORT
    await owner.version(1, 1)
    began = time.monotonic()
    with pytest.raises(Unavailable) as late:
        # items is caught up; testmgmt is behind: every source must be reached.
        await history.caught_up({"items": 1, "testmgmt": 1})
    assert time.monotonic() - began >= SHORT
    assert str(late.value) == CATCHING_UP


# ---- waits for versions ----------------------------------------------------------------


async def test_wait_for_versions_returns_once_every_pair_is_here(
    history: History, owner: Owner
) -> None:
    await owner.version(1, 1)
    arriving = asyncio.create_task(_later(0.1, owner.version(2, 1)))
    # A pair asked for twice is waited for once.
    await history.wait_for_versions([(1, 1), (2, 1), (2, 1)])
    await arriving


async def test_wait_for_versions_times_out_with_unavailable(history: History, owner: Owner) -> None:
    history.consistency_wait = SHORT
    await owner.version(1, 1)
    with pytest.raises(Unavailable) as late:
        await history.wait_for_versions([(1, 1), (1, 2)])
    assert str(late.value) == CATCHING_UP


async def test_a_read_waits_for_the_version_its_caller_knows(
    history: History, owner: Owner
) -> None:
    await owner.version(1, 1, "Login")
    arriving = asyncio.create_task(_later(0.1, owner.version(1, 2, "Log in")))
    with acting_as(ADMIN):
        row, kept = await history.get(1, 2, 2)
    await arriving
    assert (row.version, row.changed, kept.latest) == (2, "name", 2)


async def test_a_read_ahead_of_the_history_is_unavailable_and_an_unknown_item_not_found(
    history: History, owner: Owner
) -> None:
    history.consistency_wait = SHORT  # each answer below comes after the wait ran out
    await owner.version(1, 1)
    with acting_as(ADMIN), pytest.raises(Unavailable) as late:
        await history.get(1, 3, 1)
    assert str(late.value) == (
        "The history of item 1 is catching up with recent changes; try again shortly."
    )
    with acting_as(ADMIN), pytest.raises(NotFound) as unknown:
        await history.get(99, 0, 1)
    assert str(unknown.value) == "No history of abstract item 99."
    # An item the caller knows at a version, not here yet: catching up, not missing.
    with acting_as(ADMIN), pytest.raises(Unavailable):
        await history.get(99, 1, 1)
    with acting_as(ADMIN), pytest.raises(NotFound) as beyond:
        await history.get(1, 1, 5)
    assert str(beyond.value) == "Item 1 has no version 5; its versions are 1 to 1."


# ---- recording -------------------------------------------------------------------------


async def _changed(db: Database, item: int) -> dict[int, str | None]:
    async with db.read() as session:
        rows = await session.execute(
            select(versions.c.version, versions.c.changed).where(versions.c.item == item)
        )
        return {v: c for v, c in rows.all()}


async def test_what_a_version_changed_is_filled_whichever_arrives_first(
    history: History, owner: Owner, baselines_db: Database
) -> None:
    owner.position = 10
    await owner.version(1, 3, "B", {"status": "Approved"})
    await owner.version(1, 1, "A", {"status": "Draft"})
    assert await _changed(baselines_db, 1) == {1: "", 3: None}  # 2 is missing
    await owner.version(1, 2, "B", {"status": "Draft", "owner": "kim"})
    assert await _changed(baselines_db, 1) == {1: "", 2: "name,owner", 3: "owner,status"}
    async with baselines_db.read() as session:
        latest = await session.scalar(select(histories.c.latest).where(histories.c.item == 1))
    assert latest == 3  # an older version arriving late does not move the history back


async def test_a_redelivered_event_changes_nothing(
    history: History, owner: Owner, baselines_db: Database
) -> None:
    first = await owner.version(1, 1, "A")
    again = Event(
        first.type,
        actor=first.actor,
        project=PROJECT,
        object_ids=[1],
        version=1,
        payload={**first.payload, "snapshot": {**first.payload["snapshot"], "name": "Other"}},
        id=first.id,
        position=first.position,
    )
    await history.record(again)
    async with baselines_db.read() as session:
        snapshots = (await session.scalars(select(versions.c.snapshot))).all()
    assert len(snapshots) == 1
    assert '"name":"A"' in snapshots[0]


async def _history_row(db: Database, item: int) -> tuple[int, bool] | None:
    async with db.read() as session:
        row = (
            await session.execute(
                select(histories.c.latest, histories.c.deleted).where(histories.c.item == item)
            )
        ).first()
    return None if row is None else (row.latest, row.deleted)


async def test_a_batch_is_applied_as_its_events_one_by_one(
    history: History, owner: Owner, baselines_db: Database
) -> None:
    batch = [
        owner.version_event(1, 1, "A", {"status": "Draft"}),
        owner.version_event(2, 1, "Two"),
        owner.version_event(1, 2, "A", {"status": "Approved"}),
        owner.version_event(1, 3, "B", {"status": "Approved"}),
        owner.deletion_event(2),
        owner.deletion_event(1),
        owner.version_event(1, 4, "B restored", {"status": "Approved"}),
    ]
    await history.record_many(batch)
    assert await _changed(baselines_db, 1) == {1: "", 2: "status", 3: "name", 4: "name"}
    # Deletions apply after the versions before them; a version after one revives.
    assert await _history_row(baselines_db, 1) == (4, False)
    assert await _history_row(baselines_db, 2) == (1, True)
    await history.caught_up({"items": owner.position})
    # The same batch again (a redelivery after a crash), and a duplicate within one.
    await history.record_many([*batch, batch[0]])
    async with baselines_db.read() as session:
        assert len((await session.scalars(select(versions.c.id))).all()) == 5


async def test_a_batch_fills_what_versions_of_earlier_batches_changed(
    history: History, owner: Owner, baselines_db: Database
) -> None:
    owner.position = 10
    late = owner.version_event(1, 2, "B", {"status": "Draft"})
    await history.record_many(
        [owner.version_event(1, 3, "B", {"status": "Approved"}), owner.version_event(1, 5, "C")]
    )
    assert await _changed(baselines_db, 1) == {3: None, 5: None}
    await history.record_many(
        [owner.version_event(1, 1, "A", {"status": "Draft"}), late, owner.version_event(1, 4, "C")]
    )
    assert await _changed(baselines_db, 1) == {
        1: "",
        2: "name",
        3: "status",
        4: "name,status",
        5: "",
    }
    assert await _history_row(baselines_db, 1) == (5, False)


def test_changed_fields_compares_members_and_the_fields_inside_json_members() -> None:
    old = {
        "name": "A",
        "version": 1,
        "modifiedDate": "x",
        "fieldsJson": fields_json({"status": "Draft", "owner": "kim", "same": 1}),
    }
    new = {
        "name": "A",
        "version": 2,
        "modifiedDate": "y",
        "description": "new",
        "fieldsJson": fields_json({"status": "Done", "same": 1, "added": True}),
    }
    assert changed_fields(old, new) == ["added", "description", "owner", "status"]
    # A JSON member that is not an object (or not JSON) counts as empty.
    assert changed_fields({"fieldsJson": "bm90IGpzb24="}, {"fieldsJson": fields_json({})}) == []


def test_change_details_describe_a_version() -> None:
    assert change_details(1, None) == "Created"
    assert change_details(2, None) == ""
    assert change_details(2, "") == "No field changed"
    assert change_details(3, "name,status") == "Changed: name, status"
