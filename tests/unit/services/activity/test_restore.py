"""The activity's side of a restore: which activities may be restored, and the claim
that lets only one restore of an activity through."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from grpc import aio
from sqlalchemy import func, select, update

from plumbline.common.dates import utcnow
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, Unavailable
from plumbline.common.inbox import Inbox
from plumbline.services.activity.feed import Feed
from plumbline.services.activity.models import activities, consumed_events, consumer_positions
from plumbline.services.activity.restore import DONE, PENDING, STALE_CLAIM, Restorer
from tests.unit.services.conftest import ADMIN, access_cache, acting_as, migrated


@pytest.fixture
async def activity_db(tmp_path: Path) -> AsyncIterator[Database]:
    db = await migrated("activity", tmp_path)
    yield db
    await db.close()


def _unreachable() -> aio.Channel:
    raise Unavailable("items is down")


@pytest.fixture
def restorer(activity_db: Database) -> Restorer:
    inbox = Inbox(activity_db, consumed_events, consumer_positions)
    feed = Feed(activity_db, inbox, 0.1, access_cache())
    return Restorer(activity_db, feed, _unreachable)


async def _activity(db: Database, event_type: str = "DELETE", object_type: str = "ITEM") -> int:
    async with db.transaction() as session:
        await session.execute(
            activities.insert().values(
                event_id=f"e-{event_type}-{object_type}",
                date=utcnow(),
                action="Deleted",
                event_type=event_type,
                object_type=object_type,
                item=42,
                project=1,
                subtree="[43, 44]",
            )
        )
        return int(await session.scalar(select(func.max(activities.c.id))) or 0)


async def _state(db: Database, activity_id: int) -> Any:
    async with db.read() as session:
        return (
            await session.execute(
                select(activities.c.restore_state, activities.c.restored_at).where(
                    activities.c.id == activity_id
                )
            )
        ).one()


async def test_of_concurrent_claims_one_wins(restorer: Restorer) -> None:
    activity_id = await _activity(restorer.db)
    outcomes = await asyncio.gather(
        *(restorer.claim(activity_id) for _ in range(5)), return_exceptions=True
    )
    refused = [o for o in outcomes if isinstance(o, InvalidArgument)]
    assert len(refused) == 4
    assert "already been restored" in refused[0].message
    [claimed_at] = [o for o in outcomes if not isinstance(o, BaseException)]
    assert (await _state(restorer.db, activity_id)).restore_state == PENDING
    await restorer.finish(activity_id, claimed_at)
    assert (await _state(restorer.db, activity_id)).restore_state == DONE
    with pytest.raises(InvalidArgument, match="once"):
        await restorer.claim(activity_id)


async def test_a_released_or_stale_claim_can_be_taken_again(restorer: Restorer) -> None:
    activity_id = await _activity(restorer.db)
    claimed_at = await restorer.claim(activity_id)
    await restorer.release(activity_id, claimed_at)
    assert (await _state(restorer.db, activity_id)).restore_state is None
    await restorer.claim(activity_id)
    async with restorer.db.transaction() as session:
        await session.execute(
            update(activities)
            .where(activities.c.id == activity_id)
            .values(restored_at=utcnow() - STALE_CLAIM - timedelta(seconds=1))
        )
    taken_over = await restorer.claim(activity_id)
    assert (await _state(restorer.db, activity_id)).restore_state == PENDING
    await restorer.finish(activity_id, taken_over)
    assert (await _state(restorer.db, activity_id)).restore_state == DONE


async def test_a_failed_restore_gives_the_claim_back(restorer: Restorer) -> None:
    activity_id = await _activity(restorer.db)
    with acting_as(ADMIN), pytest.raises(Unavailable):
        await restorer.restore(activity_id)
    assert (await _state(restorer.db, activity_id)).restore_state is None


@pytest.mark.parametrize(
    ("event_type", "object_type"), [("UPDATE", "ITEM"), ("DELETE", "TAG"), ("CREATE", "ITEM")]
)
async def test_only_item_deletions_are_restored(
    restorer: Restorer, event_type: str, object_type: str
) -> None:
    activity_id = await _activity(restorer.db, event_type, object_type)
    with acting_as(ADMIN), pytest.raises(InvalidArgument, match="only deletions of items"):
        await restorer.restore(activity_id)
    assert (await _state(restorer.db, activity_id)).restore_state is None
