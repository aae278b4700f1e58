"""``plumbline.activity.v1.Activities``."""

from __future__ import annotations

from typing import Any

from plumbline.api.activity.v1 import activity_pb2 as pb
from plumbline.api.activity.v1 import activity_pb2_grpc
from plumbline.api.core.v1 import core_pb2
from plumbline.common.dates import format_datetime, parse_iso
from plumbline.common.inbox import targets
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.activity.feed import ActivityQuery, Feed
from plumbline.services.activity.restore import Restorer


def activity_message(row: Any) -> pb.ActivityRecord:
    """An activities row as a message."""
    return message_of(row, pb.ActivityRecord, date=format_datetime(row.date), user=row.user_id)


class ActivitiesServicer(activity_pb2_grpc.ActivitiesServicer):
    """Thin mapping onto the feed and its restores."""

    def __init__(self, feed: Feed, restorer: Restorer) -> None:
        self.feed = feed
        self.restorer = restorer

    async def ListActivities(
        self, request: pb.ListActivitiesRequest, context: Context
    ) -> pb.ActivityPage:
        await self.feed.caught_up(targets(request.wait_for))
        start, size = page_of(request.page)
        rows, total = await self.feed.list(
            ActivityQuery(
                project=request.project,
                organization=request.organization,
                item=optional(request, "item"),
                event_types=list(request.event_types),
                object_types=list(request.object_types),
                item_types=list(request.item_types),
                date_from=parse_iso(request.date_from) if request.date_from else None,
                date_to=parse_iso(request.date_to) if request.date_to else None,
                delete_events_only=request.delete_events_only,
                start_at=start,
                max_results=size,
            )
        )
        info = page_info(start, len(rows), total)
        return pb.ActivityPage(activities=[activity_message(r) for r in rows], page_info=info)

    async def GetActivity(
        self, request: pb.GetActivityRequest, context: Context
    ) -> pb.ActivityRecord:
        await self.feed.caught_up(targets(request.wait_for))
        return activity_message(await self.feed.get(request.id))

    async def ListAffectedItems(
        self, request: pb.ListAffectedItemsRequest, context: Context
    ) -> pb.AffectedItems:
        await self.feed.caught_up(targets(request.wait_for))
        start, size = page_of(request.page)
        ids, total = await self.feed.affected(request.id, start, size)
        return pb.AffectedItems(items=ids, page_info=page_info(start, len(ids), total))

    async def RestoreActivity(
        self, request: pb.RestoreActivityRequest, context: Context
    ) -> core_pb2.Empty:
        await self.feed.caught_up(targets(request.wait_for))
        await self.restorer.restore(request.id)
        return core_pb2.Empty()
