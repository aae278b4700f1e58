"""``plumbline.items.v1.Categories``: category paths and items' categories."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.items.categories import Categories


class CategoriesServicer(items_pb2_grpc.CategoriesServicer):
    """Thin mapping onto ``Categories``."""

    def __init__(self, categories: Categories) -> None:
        self.categories = categories

    async def ListCategories(
        self, request: pb.ListCategoriesRequest, context: Context
    ) -> pb.CategoryPage:
        start, size = page_of(request.page)
        item = optional(request, "item")
        ids = list(request.ids) if request.by_ids else None
        records, total = await self.categories.page(item, start, size, ids)
        messages = [message_of(record, pb.Category) for record in records]
        return pb.CategoryPage(
            categories=messages, page_info=page_info(start, len(messages), total)
        )

    async def CreateCategory(self, request: pb.CategoryInput, context: Context) -> core_pb2.Created:
        parent = optional(request, "parent")
        return core_pb2.Created(id=await self.categories.create(request.name, parent))

    async def SetCategoryVisibility(
        self, request: pb.CategoryInput, context: Context
    ) -> core_pb2.Empty:
        await self.categories.set_visible(request.id, request.visible)
        return core_pb2.Empty()

    async def ChangeItemCategories(
        self, request: pb.ItemCategoriesRequest, context: Context
    ) -> core_pb2.Empty:
        await self.categories.change_item(request.item, list(request.add), list(request.remove))
        return core_pb2.Empty()
