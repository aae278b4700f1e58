"""The change feed: each change recorded once and in cursor order, read back by cursor
with what the reader may see, long polls woken by a change, retention, on SQLite and
PostgreSQL (through the service's own migrations)."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest
from sqlalchemy import update

from plumbline.common.access import Role
from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.errors import FailedPrecondition
from plumbline.common.events import Event
from plumbline.common.inbox import Inbox
from plumbline.services.hooks.feed import ChangeFeed, ChangeQuery
from plumbline.services.hooks.models import changes, consumed_events, consumer_positions
from tests.unit.services.conftest import ADMIN, access_cache, acting_as

READER = Principal(2, "reader")


def make_feed(db: Database) -> ChangeFeed:
    inbox = Inbox(db, consumed_events, consumer_positions)
    roles = {2: {3: Role.READ_ONLY}}
    return ChangeFeed(db, inbox, consistency_wait=1, access=access_cache(roles))


def item_event(project: int, item: int, action: str, position: int) -> Event:
    return Event(
        f"items.item.{action}",
        actor=1,
        project=project,
        object_ids=[item],
        version=position,
        payload={"name": f"Item {item}", "itemType": 7},
        position=position,
    )


async def read(feed: ChangeFeed, who: Principal, **asked: object) -> tuple[list[str], int]:
    with acting_as(who):
        rows, cursor = await feed.page(ChangeQuery(**asked))  # type: ignore[arg-type]
    return [f"{r.type} {r.object_id}" for r in rows], cursor


async def test_changes_come_once_in_order_with_what_each_reader_may_see(
    hooks_db: Database,
) -> None:
    feed = make_feed(hooks_db)
    first = [item_event(3, 10, "created", 1), item_event(9, 90, "created", 2)]
    await feed.record_many(first)
    # Redelivered, an internal event, another source's (the organisation's).
    user = Event("identity.user.created", actor=1, object_ids=[5], position=1)
    internal = Event("items.idblock.allocated", actor=None, position=3)
    await feed.record_many([first[0], internal, item_event(3, 10, "updated", 4), user])
    everything, head = await read(feed, ADMIN)
    assert everything == [
        "items.item.created 10",
        "items.item.created 90",
        "items.item.updated 10",
        "identity.user.created 5",
    ]
    # The reader reads project 3 only, and nothing of the organisation's.
    assert await read(feed, READER) == (["items.item.created 10", "items.item.updated 10"], 3)
    # Paging by cursor: each once, none skipped.
    page, cursor = await read(feed, ADMIN, limit=2)
    rest, end = await read(feed, ADMIN, after=cursor)
    assert (page + rest, end) == (everything, head)
    # A filter that matches nothing still moves the cursor to the head.
    assert await read(feed, ADMIN, object_types=["TEST_RUN"]) == ([], head)
    assert await read(feed, ADMIN, event_types=["UPDATE"], projects=[3]) == (
        ["items.item.updated 10"],
        3,
    )
    assert (await read(feed, ADMIN, item_types=[7]))[0] == everything[:3]


async def test_a_relationship_into_a_project_the_reader_may_not_read_is_not_shown(
    hooks_db: Database,
) -> None:
    feed = make_feed(hooks_db)
    for position, (to_item, to_project) in enumerate(((20, 3), (90, 9)), 1):
        payload = {"fromItem": 10, "toItem": to_item, "toProject": to_project}
        await feed.record_many(
            [
                Event(
                    "items.relationship.created",
                    1,
                    3,
                    [position],
                    payload=payload,
                    position=position,
                )
            ]
        )
    assert (await read(feed, ADMIN))[0] == [
        "items.relationship.created 1",
        "items.relationship.created 2",
    ]
    assert (await read(feed, READER))[0] == ["items.relationship.created 1"]


async def test_a_long_poll_answers_as_soon_as_a_change_is_recorded(hooks_db: Database) -> None:
    feed = make_feed(hooks_db)
    await feed.record_many([item_event(3, 10, "created", 1)])
    _, cursor = await read(feed, ADMIN)
    started = time.monotonic()
    waiting = asyncio.create_task(read(feed, ADMIN, after=cursor, wait=10.0))
    await asyncio.sleep(0.3)
    assert not waiting.done()
    await feed.record_many([item_event(3, 10, "updated", 2)])
    changes_read, _ = await asyncio.wait_for(waiting, 2)
    assert changes_read == ["items.item.updated 10"]
    assert time.monotonic() - started < 1.0
    # Nothing comes: the wait ends empty, the cursor kept.
    started = time.monotonic()
    assert await read(feed, ADMIN, after=cursor + 1, wait=0.3) == ([], cursor + 1)
    assert 0.3 <= time.monotonic() - started < 1.0


async def test_a_long_poll_wakes_for_what_another_replica_records(hooks_db: Database) -> None:
    here, there = make_feed(hooks_db), make_feed(hooks_db)
    await there.record_many([item_event(3, 10, "created", 1)])
    _, cursor = await read(here, ADMIN)
    polls = [asyncio.create_task(read(here, ADMIN, after=cursor, wait=10.0)) for _ in range(3)]
    await asyncio.sleep(0.3)
    await there.record_many([item_event(3, 10, "updated", 2)])
    written = time.monotonic()
    answers = await asyncio.wait_for(asyncio.gather(*polls), 5)
    assert [changes_read for changes_read, _ in answers] == [["items.item.updated 10"]] * 3
    # One head watcher for the waiters, seeing the other replica's write within its period.
    assert time.monotonic() - written < 1.0
    await asyncio.sleep(0.3)
    assert here._watcher is None  # no waiter left: it stopped
    await here.close()


async def test_concurrent_writers_make_cursors_visible_in_order(hooks_db: Database) -> None:
    feed = make_feed(hooks_db)
    seen: list[int] = []
    done = asyncio.Event()

    async def follow() -> None:
        cursor = 0
        while not done.is_set() or cursor < 200:
            with acting_as(ADMIN):
                rows, cursor = await feed.page(ChangeQuery(after=cursor, limit=1000))
            seen.extend(r.id for r in rows)
            await asyncio.sleep(0)

    async def write(project: int) -> None:
        for n in range(20):
            batch = [
                item_event(project, 1000 * project + n * 5 + k, "created", 0) for k in range(5)
            ]
            await feed.record_many(batch)

    follower = asyncio.create_task(follow())
    await asyncio.gather(*(write(p) for p in (1, 2)))
    done.set()
    await asyncio.wait_for(follower, 10)
    # Every change read once, in cursor order, none skipped by a later commit.
    assert seen == sorted(seen)
    assert len(seen) == len(set(seen)) == 200


async def test_retention_prunes_old_changes_and_refuses_a_cursor_behind_them(
    hooks_db: Database,
) -> None:
    feed = make_feed(hooks_db)
    await feed.record_many([item_event(3, 10 + n, "created", n + 1) for n in range(5)])
    async with hooks_db.transaction() as session:
        old = changes.c.id <= 3
        await session.execute(
            update(changes)
            .where(old)
            .values(recorded_at=changes.c.recorded_at - timedelta(days=31))
        )
    assert await feed.prune(timedelta(days=30)) == 3
    assert await feed.prune(timedelta(days=30)) == 0
    # From the start: the oldest kept. From a cursor past what went: as before.
    assert (await read(feed, ADMIN))[0] == ["items.item.created 13", "items.item.created 14"]
    assert (await read(feed, ADMIN, after=3))[0] == [
        "items.item.created 13",
        "items.item.created 14",
    ]
    with pytest.raises(FailedPrecondition, match="cursor 2 is older than the change feed keeps"):
        await read(feed, ADMIN, after=2)


async def test_paging_through_ten_thousand_changes_reads_each_once_in_order(
    hooks_db: Database,
) -> None:
    feed = make_feed(hooks_db)
    # Five projects' changes interleaved, as the consumer's partitions write them.
    for first in range(0, 10_000, 500):
        await feed.record_many(
            [item_event(1 + n % 5, n, "created", n + 1) for n in range(first, first + 500)]
        )
    seen: list[int] = []
    cursors: list[int] = []
    cursor = 0
    while True:
        with acting_as(ADMIN):
            rows, cursor = await feed.page(ChangeQuery(after=cursor, limit=1000))
        if not rows:
            break
        seen += [r.object_id for r in rows]
        cursors += [r.id for r in rows]
    assert seen == list(range(10_000))
    assert cursors == sorted(set(cursors))
    # One project's changes, filtered, by the same cursors: its own in order.
    with acting_as(ADMIN):
        rows, _ = await feed.page(ChangeQuery(projects=[3], limit=1000))
    assert [r.object_id for r in rows] == list(range(2, 5_002, 5))[:1000]
