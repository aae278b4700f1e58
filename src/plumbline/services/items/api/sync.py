"""``plumbline.items.v1.Sync``: synchronized items."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context, page_info, page_of
from plumbline.services.items.api.items import ItemMessages
from plumbline.services.items.sync import Sync


class SyncServicer(items_pb2_grpc.SyncServicer):
    """Thin mapping onto ``Sync``."""

    def __init__(self, sync: Sync, render: ItemMessages) -> None:
        self.sync = sync
        self.render = render

    async def ListSyncedItems(self, request: pb.ListItemsRequest, context: Context) -> pb.ItemPage:
        start, size = page_of(request.page)
        rows, total = await self.sync.pool(request.parent, start, size)
        messages = await self.render(rows, request.dates_with_time)
        return pb.ItemPage(items=messages, page_info=page_info(start, len(messages), total))

    async def AddSyncedItem(self, request: pb.ItemPair, context: Context) -> core_pb2.Empty:
        await self.sync.add(request.item, request.other)
        return core_pb2.Empty()

    async def RemoveSyncedItem(self, request: pb.ItemPair, context: Context) -> core_pb2.Empty:
        await self.sync.remove(request.item, request.other)
        return core_pb2.Empty()

    async def GetSyncStatus(self, request: pb.ItemPair, context: Context) -> pb.SyncStatus:
        state = await self.sync.status(request.item, request.other)
        return pb.SyncStatus(
            in_sync=state.in_sync,
            has_collection=state.has_collection,
            total_children=state.total_children,
            total_missing=state.total_missing,
            total_out_of_sync=state.total_out_of_sync,
        )
