"""``/items/{id}/synceditems``: items synchronized with an item."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.items.v1 import items_pb2
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import (
    SyncedItemBody,
)
from plumbline.gateway.deps import Gw, Paging, Version, View, dates_with_time, view_of
from plumbline.gateway.envelope import created, deleted

router = APIRouter(prefix="/rest/{version}", tags=["synchronized items"])

Items = Annotated[View, Depends(view_of("items"))]


SyncStatusView = Annotated[View, Depends(view_of("syncstatus"))]


@router.get(
    "/items/{id}/synceditems",
    summary="Items synchronized with an item",
    responses=schemas.page(records.Item),
)
async def synced_items(request: Request, id: int, view: Items, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.sync.ListSyncedItems(
        items_pb2.ListItemsRequest(
            parent=id, page=page.message(), dates_with_time=dates_with_time(request)
        )
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


@router.post(
    "/items/{id}/synceditems",
    status_code=201,
    summary="Add an item to a sync pool",
    responses=schemas.created(),
)
async def add_synced_item(
    request: Request, id: int, body: SyncedItemBody, version: Version, gw: Gw
) -> Response:
    view = View(request, gw, version, "items")
    await gw.upstreams.items.sync.AddSyncedItem(items_pb2.ItemPair(item=id, other=body.item))
    return created(body.item, view.location(f"items/{body.item}"))


@router.delete(
    "/items/{id}/synceditems/{syncedItemId}",
    status_code=204,
    summary="Break synchronization",
    responses=schemas.deleted(),
)
async def remove_synced_item(id: int, syncedItemId: int, gw: Gw) -> Response:
    await gw.upstreams.items.sync.RemoveSyncedItem(items_pb2.ItemPair(item=id, other=syncedItemId))
    return deleted()


@router.get(
    "/items/{id}/synceditems/{syncedItemId}/syncstatus",
    summary="Whether two items are in sync",
    responses=schemas.one(records.SyncStatus),
)
async def sync_status(id: int, syncedItemId: int, view: SyncStatusView, gw: Gw) -> Response:
    reply = await gw.upstreams.items.sync.GetSyncStatus(
        items_pb2.ItemPair(item=id, other=syncedItemId)
    )
    # The contract's SyncStatus requires collectionSummary, also for items without children.
    data: records.SyncStatus = {
        "inSync": reply.in_sync,
        "collectionSummary": {
            "totalChildren": reply.total_children,
            "totalMissing": reply.total_missing,
            "totalOutOfSync": reply.total_out_of_sync,
        },
    }
    return await view.one(data)
