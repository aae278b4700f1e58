"""``plumbline.hooks.v1.Changes``."""

from __future__ import annotations

from typing import Any

from plumbline.api.hooks.v1 import hooks_pb2 as pb
from plumbline.api.hooks.v1 import hooks_pb2_grpc
from plumbline.common.dates import format_datetime
from plumbline.common.inbox import targets
from plumbline.common.rpc import Context, message_of
from plumbline.services.hooks.feed import ChangeFeed, ChangeQuery


def change_message(row: Any) -> pb.Change:
    """A ``changes`` row as a message."""
    return message_of(
        row, pb.Change, cursor=row.id, id=row.event_id, time=format_datetime(row.time)
    )


class ChangesServicer(hooks_pb2_grpc.ChangesServicer):
    """Thin mapping onto the change feed."""

    def __init__(self, feed: ChangeFeed) -> None:
        self.feed = feed

    async def ListChanges(self, request: pb.ListChangesRequest, context: Context) -> pb.ChangePage:
        await self.feed.caught_up(targets(request.wait_for))
        rows, cursor = await self.feed.page(
            ChangeQuery(
                after=request.after,
                limit=request.limit or 100,
                wait=request.wait_seconds,
                object_types=list(request.object_types),
                event_types=list(request.event_types),
                projects=list(request.projects),
                item_types=list(request.item_types),
            )
        )
        return pb.ChangePage(changes=[change_message(r) for r in rows], next=cursor)
