"""``/items``: the requirements tree, item by item and in bulk; locks; duplicates."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.attachments.v1 import attachments_pb2
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common import jsonpatch
from plumbline.common.errors import InvalidArgument
from plumbline.common.jsonvalues import free_json
from plumbline.common.rpc import from_wire
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import DuplicateBody, ItemBody, ItemPatch, LockBody, PatchOperation
from plumbline.gateway.deps import Gateway, Gw, Paging, Version, View, dates_with_time, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.routes.versions import AsOf, as_of_record

router = APIRouter(prefix="/rest/{version}", tags=["items"])

Items = Annotated[View, Depends(view_of("items"))]


Locations = Annotated[View, Depends(view_of("locations"))]


RootOnly = Annotated[
    bool, Depends(query.boolean("rootOnly", description="Only the items at the project's root."))
]


Locks = Annotated[View, Depends(view_of("locks"))]


def global_id_manually(request: Request) -> bool:
    """``setGlobalIdManually`` in any capitalisation, of name and value."""
    for key, value in request.query_params.multi_items():
        if key.lower() == "setglobalidmanually":
            lowered = value.strip().lower()
            if lowered not in ("true", "false"):
                raise InvalidArgument(f"setGlobalIdManually must be true or false, got {value!r}")
            return lowered == "true"
    return False


GlobalIdManually = Annotated[
    bool,
    Depends(
        query.from_request(
            "setGlobalIdManually",
            {"type": "boolean", "default": False},
            global_id_manually,
            description="Take globalId from the body instead of assigning one.",
        )
    ),
]


def item_input(body: ItemBody, manually: bool) -> items_pb2.ItemInput:
    """The ItemInput of a POST or PUT body."""
    message = from_wire(
        items_pb2.ItemInput(
            fields_json=free_json(body.fields, "fields"), set_global_id_manually=manually
        ),
        dict(body),  # project, itemType, childItemType, globalId: by their wire names
    )
    parent = body.location.parent if body.location else None
    if parent is not None:
        if parent.item is not None:
            message.parent_item = parent.item
        if parent.project is not None:
            message.parent_project = parent.project
    return message


async def _get(gw: Gateway, request: Request, ids: list[int]) -> list[records.Item]:
    reply = await gw.upstreams.items.items.GetItems(
        items_pb2.GetItemsRequest(ids=ids, dates_with_time=dates_with_time(request))
    )
    return [representations.item(i) for i in reply.items]


@router.get("/items", summary="List the items of a project", responses=schemas.page(records.Item))
async def list_items(
    request: Request,
    view: Items,
    gw: Gw,
    page: Paging,
    project: query.RequiredProject,
    root_only: RootOnly,
) -> Response:
    reply = await gw.upstreams.items.items.ListItems(
        items_pb2.ListItemsRequest(
            project=project,
            root_only=root_only,
            page=page.message(),
            dates_with_time=dates_with_time(request),
        )
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


@router.post("/items", status_code=201, summary="Create an item", responses=schemas.created())
async def create_item(
    request: Request,
    body: ItemBody,
    version: Version,
    gw: Gw,
    manually: GlobalIdManually,
) -> Response:
    view = View(request, gw, version, "items")
    reply = await gw.upstreams.items.items.CreateItem(item_input(body, manually))
    return created(reply.id, view.location(f"items/{reply.id}"))


@router.get("/items/{id}", summary="Get an item", responses=schemas.one(records.Item))
async def get_item(request: Request, id: int, view: Items, gw: Gw, as_of: AsOf) -> Response:
    if as_of is not None:
        return await view.one(await as_of_record(gw, request, "items", id, as_of))
    [item] = await _get(gw, request, [id])
    return await view.one(item)


@router.put("/items/{id}", summary="Update an item", responses=schemas.updated())
async def update_item(
    request: Request,
    id: int,
    body: ItemBody,
    gw: Gw,
    manually: GlobalIdManually,
) -> Response:
    await gw.upstreams.items.items.UpdateItem(
        items_pb2.UpdateItemRequest(id=id, item=item_input(body, manually))
    )
    return updated()


@router.patch(
    "/items/{id}",
    summary="Change an item with RFC 6902 operations",
    responses=schemas.updated(),
    openapi_extra=schemas.array_body(PatchOperation),
)
async def patch_item(request: Request, id: int, gw: Gw, manually: GlobalIdManually) -> Response:
    await gw.upstreams.items.items.PatchItem(
        items_pb2.PatchItemRequest(
            id=id, operations_json=await request.body(), set_global_id_manually=manually
        )
    )
    return updated()


@router.delete(
    "/items/{id}",
    status_code=204,
    summary="Delete an item (it becomes inactive)",
    responses=schemas.deleted(),
)
async def delete_item(id: int, gw: Gw) -> Response:
    await gw.upstreams.items.items.DeleteItem(core_pb2.Id(id=id))
    return deleted()


@router.get(
    "/items/{id}/children", summary="List an item's children", responses=schemas.page(records.Item)
)
async def children(request: Request, id: int, view: Items, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.items.ListItems(
        items_pb2.ListItemsRequest(
            parent=id, page=page.message(), dates_with_time=dates_with_time(request)
        )
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


@router.get(
    "/items/{id}/parent", summary="Get an item's parent item", responses=schemas.one(records.Item)
)
async def parent(request: Request, id: int, view: Items, gw: Gw) -> Response:
    [item] = await _get(gw, request, [id])
    parent_id = item["location"]["parent"].get("item")
    if parent_id is None:
        raise InvalidArgument(
            f"Item {id} is at the root of project {item['project']}; it has no parent item."
        )
    [parent_item] = await _get(gw, request, [parent_id])
    return await view.one(parent_item)


@router.get(
    "/items/{id}/location",
    summary="Get an item's location",
    responses=schemas.one(records.Location),
)
async def location(request: Request, id: int, view: Locations, gw: Gw) -> Response:
    [item] = await _get(gw, request, [id])
    return await view.one(item["location"])


@router.patch(
    "/items",
    summary="Change many items with RFC 6902 operations",
    responses=schemas.updated(records.PatchResults),
    openapi_extra=schemas.array_body(ItemPatch, max_items=jsonpatch.MAX_BULK),
)
async def patch_items(request: Request, gw: Gw, manually: GlobalIdManually) -> Response:
    """Body: ``[{"id": 12, "operations": [...]}, ...]``; each item succeeds or fails alone."""
    reply = await gw.upstreams.items.items.PatchItems(
        items_pb2.PatchItemsRequest(body_json=await request.body(), set_global_id_manually=manually)
    )
    results: list[records.PatchResult] = [
        {"id": r.id, "status": r.status, "message": r.message} for r in reply.results
    ]
    outcome: records.PatchResults = {"workId": str(uuid.uuid4()), "results": results}
    return updated(outcome)


@router.get("/items/{id}/lock", summary="Get an item's lock", responses=schemas.one(records.Lock))
async def get_lock(id: int, view: Locks, gw: Gw) -> Response:
    reply = await gw.upstreams.items.items.GetItems(items_pb2.GetItemsRequest(ids=[id]))
    return await view.one(representations.lock(representations.item(reply.items[0])))


@router.put("/items/{id}/lock", summary="Lock or unlock an item", responses=schemas.updated())
async def put_lock(id: int, body: LockBody, gw: Gw) -> Response:
    await gw.upstreams.items.items.SetLock(items_pb2.SetLockRequest(item=id, locked=body.locked))
    return updated()


@router.post(
    "/items/{id}/duplicate",
    status_code=201,
    summary="Duplicate an item without children",
    responses=schemas.created(),
)
async def duplicate(
    request: Request, id: int, body: DuplicateBody, version: Version, gw: Gw
) -> Response:
    view = View(request, gw, version, "items")
    reply = await gw.upstreams.items.items.DuplicateItem(
        items_pb2.DuplicateRequest(
            item=id,
            include_tags=body.includeTags,
            include_links=body.includeLinks,
        )
    )
    if body.includeAttachments:
        # The copy hangs on the same attachments (the attachments service keeps them).
        found = await gw.upstreams.items.items.GetItems(
            items_pb2.GetItemsRequest(ids=[id, reply.id])
        )
        source, copy = (attachments_pb2.Owner(id=i.id, project=i.project) for i in found.items)
        await gw.upstreams.attachments.links.CopyLinks(
            attachments_pb2.CopyLinksRequest(source=source, target=copy)
        )
    return created(reply.id, view.location(f"items/{reply.id}"))
