"""``plumbline.items.v1.Items``: the requirements tree."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common import jsonpatch
from plumbline.common.access import AccessCache
from plumbline.common.dates import parse_iso
from plumbline.common.errors import InvalidArgument, PlumblineError
from plumbline.common.rpc import Context, given, optional, page_info, page_of
from plumbline.services.items import itemdoc
from plumbline.services.items.config import Configuration
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.items import Items
from plumbline.services.items.links import Links
from plumbline.services.items.messages import item_message
from plumbline.services.items.models import items as items_table
from plumbline.services.items.restore import Restore
from plumbline.services.items.search import Search, search


def item_input(message: pb.ItemInput) -> ItemInput:
    """The domain input of an ItemInput message."""
    fields: dict[str, Any] = {}
    if message.fields_json:
        try:
            fields = json.loads(message.fields_json)
        except ValueError:
            raise InvalidArgument("fields must be a JSON object") from None
    return ItemInput(**given(message, _INPUT_NAMES), fields=fields)


# The input's members the message carries under the same names (all but ``fields``).
_INPUT_NAMES = tuple(f.name for f in dataclasses.fields(ItemInput) if f.name != "fields")


class ItemMessages:
    """Renders items rows as messages, with the caller's lock view and date form."""

    def __init__(self, config: Configuration, access: AccessCache) -> None:
        self.config = config
        self.access = access

    async def __call__(self, rows: list[Any], dates_with_time: bool) -> list[pb.Item]:
        catalog = await self.config.catalog()
        access = await self.access.current()
        return [item_message(r, catalog, dates_with_time, access) for r in rows]


class ItemsServicer(items_pb2_grpc.ItemsServicer):
    """Thin mapping onto ``Items``."""

    def __init__(self, items: Items, links: Links, render: ItemMessages, restore: Restore) -> None:
        self.items = items
        self.links = links
        self.render = render
        self.restore = restore

    async def ListItems(self, request: pb.ListItemsRequest, context: Context) -> pb.ItemPage:
        start, size = page_of(request.page)
        parent = optional(request, "parent")
        rows, total = await self.items.page(request.project, request.root_only, parent, start, size)
        info = page_info(start, len(rows), total)
        return pb.ItemPage(items=await self.render(rows, request.dates_with_time), page_info=info)

    async def GetItems(self, request: pb.GetItemsRequest, context: Context) -> pb.ItemList:
        rows = await self.items.get_many(list(request.ids))
        return pb.ItemList(items=await self.render(rows, request.dates_with_time))

    async def GetItemVersions(
        self, request: core_pb2.IdList, context: Context
    ) -> pb.ItemVersionList:
        rows = await self.items.get_many(
            list(request.ids), items_table.c.id, items_table.c.version, items_table.c.project
        )
        return pb.ItemVersionList(
            items=[pb.ItemVersion(id=r.id, version=r.version, project=r.project) for r in rows]
        )

    async def GetItemsIncludingDeleted(
        self, request: pb.GetItemsRequest, context: Context
    ) -> pb.ItemList:
        rows = await self.restore.get_many(list(request.ids))
        messages = await self.render(rows, request.dates_with_time)
        for row, message in zip(rows, messages, strict=True):
            if not row.active:
                message.ClearField("allowed")  # nothing can be done to a deleted item
        return pb.ItemList(items=messages)

    async def RestoreItem(
        self, request: pb.RestoreItemRequest, context: Context
    ) -> pb.RestoreItemReply:
        restored = await self.restore.restore(request.item, list(request.subtree))
        return pb.RestoreItemReply(restored=restored)

    async def CreateItem(self, request: pb.ItemInput, context: Context) -> core_pb2.Created:
        return core_pb2.Created(id=await self.items.create(item_input(request)))

    async def CreateItems(self, request: pb.ItemInputList, context: Context) -> core_pb2.IdList:
        ids = await self.items.create_many([item_input(m) for m in request.items])
        return core_pb2.IdList(ids=ids)

    async def UpdateItem(self, request: pb.UpdateItemRequest, context: Context) -> core_pb2.Empty:
        await self.items.update(request.id, item_input(request.item))
        return core_pb2.Empty()

    async def PatchItem(self, request: pb.PatchItemRequest, context: Context) -> core_pb2.Empty:
        operations = jsonpatch.operations(request.operations_json)
        await self.items.patch(request.id, operations, request.set_global_id_manually)
        return core_pb2.Empty()

    async def PatchItems(
        self, request: pb.PatchItemsRequest, context: Context
    ) -> pb.PatchItemsReply:
        results = []
        for item_id, operations in itemdoc.bulk_patch(request.body_json):
            try:
                await self.items.patch(item_id, operations, request.set_global_id_manually)
                results.append(pb.PatchResult(id=item_id, status=200, message="OK"))
            except PlumblineError as exc:
                results.append(
                    pb.PatchResult(id=item_id, status=exc.http_status, message=exc.message)
                )
        return pb.PatchItemsReply(results=results)

    async def DeleteItem(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.items.delete(request.id)
        return core_pb2.Empty()

    async def SetLock(self, request: pb.SetLockRequest, context: Context) -> core_pb2.Empty:
        await self.items.set_lock(request.item, request.locked)
        return core_pb2.Empty()

    async def DuplicateItem(
        self, request: pb.DuplicateRequest, context: Context
    ) -> core_pb2.Created:
        new_id = await self.links.duplicate(
            request.item, request.include_tags, request.include_links
        )
        return core_pb2.Created(id=new_id)

    async def SearchItems(self, request: core_pb2.RecordSearch, context: Context) -> pb.ItemPage:
        start, size = page_of(request.page)

        def bound(text: str) -> Any:
            return parse_iso(text) if text else None

        query = Search(
            projects=list(request.projects),
            item_types=list(request.item_types),
            document_keys=list(request.document_keys),
            releases=list(request.releases),
            ranges={
                "created": (bound(request.created_from), bound(request.created_to)),
                "modified": (bound(request.modified_from), bound(request.modified_to)),
                "lastActivity": (
                    bound(request.last_activity_from),
                    bound(request.last_activity_to),
                ),
            },
            contains=list(request.contains),
            sort_field=request.sort_field or "sequence",
            descending=request.sort_descending,
        )
        access = await self.items.access.current()
        rows, total = await search(self.items.db, query, start, size, access)
        info = page_info(start, len(rows), total)
        return pb.ItemPage(items=await self.render(rows, request.dates_with_time), page_info=info)
