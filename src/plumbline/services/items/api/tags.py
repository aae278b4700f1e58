"""``plumbline.items.v1.Tags``: tags and the items they tag."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.items.api.items import ItemMessages
from plumbline.services.items.foreign import vouched
from plumbline.services.items.items import Items
from plumbline.services.items.tags import Tags


def tag_message(row: Any) -> pb.Tag:
    """A tags row as a message."""
    return message_of(row, pb.Tag)


class TagsServicer(items_pb2_grpc.TagsServicer):
    """Thin mapping onto ``Tags``."""

    def __init__(self, tags: Tags, items: Items, render: ItemMessages) -> None:
        self.tags = tags
        self.items = items
        self.render = render

    async def ListTags(self, request: pb.ListTagsRequest, context: Context) -> pb.TagPage:
        start, size = page_of(request.page)
        rows, total = await self.tags.page(
            optional(request, "project"),
            optional(request, "item"),
            start,
            size,
            vouched(request.foreign),
        )
        return pb.TagPage(
            tags=[tag_message(r) for r in rows], page_info=page_info(start, len(rows), total)
        )

    async def GetTags(self, request: core_pb2.IdList, context: Context) -> pb.TagList:
        return pb.TagList(
            tags=[tag_message(r) for r in await self.tags.get_many(list(request.ids))]
        )

    async def CreateTag(self, request: pb.TagInput, context: Context) -> core_pb2.Created:
        return core_pb2.Created(id=await self.tags.create(request.name, request.project))

    async def UpdateTag(self, request: pb.TagInput, context: Context) -> core_pb2.Empty:
        await self.tags.update(request.id, request.name)
        return core_pb2.Empty()

    async def DeleteTag(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.tags.delete(request.id)
        return core_pb2.Empty()

    async def TagItem(self, request: pb.ItemTag, context: Context) -> core_pb2.Empty:
        await self.tags.tag_item(request.item, request.tag, vouched(request.foreign))
        return core_pb2.Empty()

    async def UntagItem(self, request: pb.ItemTag, context: Context) -> core_pb2.Empty:
        await self.tags.untag_item(request.item, request.tag, vouched(request.foreign))
        return core_pb2.Empty()

    async def ListTaggedItems(
        self, request: pb.ListTaggedItemsRequest, context: Context
    ) -> pb.ItemPage:
        start, size = page_of(request.page)
        ids, total = await self.tags.tagged_item_ids(request.tag, start, size)
        rows = await self.items.get_many(ids) if ids else []
        messages = await self.render(rows, request.dates_with_time)
        return pb.ItemPage(items=messages, page_info=page_info(start, len(messages), total))
