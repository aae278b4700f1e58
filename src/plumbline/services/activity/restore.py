"""``POST /activities/{id}/restore``: undoing an item deletion, once.

The activity service orchestrates and the items service does the work: it makes the
deleted item and the items deleted with it (the subtree the deletion event named) active
again, and writes an ``items.item.restored`` event for each, which the feed records as
their update. The activity remembers its restore in its own row: a restore first claims
the row (a conditional UPDATE, so of two concurrent restores one claims it and the other
is refused), then calls items, then marks the claim done. A failed call gives the claim
back; a claim left behind by a process that died mid-call can be taken over after
``STALE_CLAIM``, longer than any call may last.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from grpc import aio
from sqlalchemy import ColumnElement, and_, or_, update

from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.common.changes import is_item_deletion
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, affected
from plumbline.common.errors import InvalidArgument
from plumbline.services.activity.feed import Feed, subtree_of
from plumbline.services.activity.models import activities

PENDING, DONE = "pending", "done"

#: After this long a pending claim is taken to be a dead process's.
STALE_CLAIM = timedelta(minutes=5)


class Restorer:
    """Restores what delete activities of items deleted."""

    def __init__(self, db: Database, feed: Feed, items: Callable[[], aio.Channel]) -> None:
        self.db = db
        self.feed = feed
        self._items = items

    async def restore(self, activity_id: int) -> None:
        """Restores the item activity ``activity_id`` deleted, with its subtree and their
        relationships (WRITE on its project, which the items service checks)."""
        row = await self.feed.get(activity_id)
        if not is_item_deletion(row.event_type, row.object_type, row.item):
            raise InvalidArgument(
                f"Activity {activity_id} is not the deletion of an item (it is eventType "
                f"{row.event_type}, objectType {row.object_type}); only deletions of items "
                "(eventType DELETE, objectType ITEM) can be restored."
            )
        claimed_at = await self.claim(activity_id)
        try:
            await items_pb2_grpc.ItemsStub(self._items()).RestoreItem(
                items_pb2.RestoreItemRequest(item=row.item, subtree=subtree_of(row))
            )
        except BaseException:
            await self.release(activity_id, claimed_at)
            raise
        await self.finish(activity_id, claimed_at)

    async def claim(self, activity_id: int) -> datetime:
        """Takes the activity's restore for this call (returns when), or refuses: restored
        already, or being restored."""
        now = utcnow()
        async with self.db.transaction() as session:
            claimed = await affected(
                session,
                update(activities)
                .where(
                    activities.c.id == activity_id,
                    or_(
                        activities.c.restore_state.is_(None),
                        and_(
                            activities.c.restore_state == PENDING,
                            activities.c.restored_at < now - STALE_CLAIM,
                        ),
                    ),
                )
                .values(restore_state=PENDING, restored_at=now),
            )
        if not claimed:
            raise InvalidArgument(
                f"Activity {activity_id} has already been restored (or is being restored); "
                "a deletion can be restored once."
            )
        return now

    async def release(self, activity_id: int, claimed_at: datetime) -> None:
        """Gives a claim back after the restore failed (unless another took it over)."""
        async with self.db.transaction() as session:
            await session.execute(
                update(activities)
                .where(self._ours(activity_id, claimed_at))
                .values(restore_state=None, restored_at=None)
            )

    async def finish(self, activity_id: int, claimed_at: datetime) -> None:
        """Marks the activity restored."""
        async with self.db.transaction() as session:
            await session.execute(
                update(activities)
                .where(self._ours(activity_id, claimed_at))
                .values(restore_state=DONE, restored_at=utcnow())
            )

    @staticmethod
    def _ours(activity_id: int, claimed_at: datetime) -> ColumnElement[bool]:
        """The activity's row while this call's claim holds it."""
        return and_(
            activities.c.id == activity_id,
            activities.c.restore_state == PENDING,
            activities.c.restored_at == claimed_at,
        )
