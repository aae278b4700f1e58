"""``/items``: the requirements tree."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.common.errors import InvalidArgument
from plumbline.core.v1 import core_pb2
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import (
    ItemBody,
    ItemPatch,
    MoveBody,
    PatchOperation,
    SyncedItemBody,
    TransitionBody,
    TreeLocationBody,
    free_json,
    json_bytes,
)
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["items"])

DATE_HEADERS = ("x-service-date-fields-with-time", "x-jama-date-fields-with-time")


def dates_with_time(request: Request) -> bool:
    """Whether the caller wants dates in ``fields`` with a time part."""
    return any(request.headers.get(h, "").strip().lower() == "true" for h in DATE_HEADERS)


def global_id_manually(request: Request) -> bool:
    """``setGlobalIdManually`` in any capitalisation, of name and value."""
    for key, value in request.query_params.multi_items():
        if key.lower() == "setglobalidmanually":
            lowered = value.strip().lower()
            if lowered not in ("true", "false"):
                raise InvalidArgument(f"setGlobalIdManually must be true or false, got {value!r}")
            return lowered == "true"
    return False


# Declared for the description and checked before the route runs; item_input and the
# PATCH routes read it with the same function.
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
Items = Annotated[View, Depends(view_of("items"))]
Locations = Annotated[View, Depends(view_of("locations"))]
SyncStatusView = Annotated[View, Depends(view_of("syncstatus"))]
Transitions = Annotated[View, Depends(view_of("workflowtransitions"))]
RootOnly = Annotated[
    bool, Depends(query.boolean("rootOnly", description="Only the items at the project's root."))
]


def item_input(request: Request, body: ItemBody) -> items_pb2.ItemInput:
    """The ItemInput of a POST or PUT body."""
    message = items_pb2.ItemInput(
        fields_json=free_json(body.fields, "fields"),
        set_global_id_manually=global_id_manually(request),
    )
    for attribute, value in (
        ("project", body.project),
        ("item_type", body.itemType),
        ("child_item_type", body.childItemType),
        ("global_id", body.globalId),
    ):
        if value is not None:
            setattr(message, attribute, value)
    parent = body.location.parent if body.location else None
    if parent is not None:
        if parent.item is not None:
            message.parent_item = parent.item
        if parent.project is not None:
            message.parent_project = parent.project
    return message


async def _json_body(request: Request) -> Any:
    """A body read as JSON by the route itself (PATCH); ``json_bytes`` checks its values."""
    raw = await request.body()
    try:
        body = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError as exc:
        raise InvalidArgument(f"The request body is not valid JSON ({exc}).") from None
    return body


async def _get(gw: Any, request: Request, ids: list[int]) -> list[records.Item]:
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
    _c: Caller,
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
    _c: Caller,
    _manually: GlobalIdManually,
) -> Response:
    view = View(request, gw, version, "items")
    reply = await gw.upstreams.items.items.CreateItem(item_input(request, body))
    return created(reply.id, view.location(f"items/{reply.id}"))


@router.get("/items/{id}", summary="Get an item", responses=schemas.one(records.Item))
async def get_item(request: Request, id: int, view: Items, gw: Gw, _c: Caller) -> Response:
    [item] = await _get(gw, request, [id])
    return await view.one(item)


@router.put(
    "/items/treelocation",
    summary="Place an item under a parent, after a peer",
    responses=schemas.updated(),
)
@router.put("/items/treeLocation", include_in_schema=False)
async def place_item(body: TreeLocationBody, version: Version, gw: Gw, _c: Caller) -> Response:
    """Same project only; ``peer`` is the sibling the item follows (first when omitted)."""
    await gw.upstreams.items.moves.PlaceItem(
        items_pb2.PlaceItemRequest(
            item=body.item,
            parent_item=body.parent.item,
            parent_project=body.parent.project,
            peer=body.peer,
        )
    )
    return updated()


@router.put("/items/{id}", summary="Update an item", responses=schemas.updated())
async def update_item(
    request: Request,
    id: int,
    body: ItemBody,
    version: Version,
    gw: Gw,
    _c: Caller,
    _manually: GlobalIdManually,
) -> Response:
    await gw.upstreams.items.items.UpdateItem(
        items_pb2.UpdateItemRequest(id=id, item=item_input(request, body))
    )
    return updated()


@router.patch(
    "/items/{id}",
    summary="Change an item with RFC 6902 operations",
    responses=schemas.updated(),
    openapi_extra=schemas.array_body(PatchOperation),
)
async def patch_item(
    request: Request, id: int, version: Version, gw: Gw, _c: Caller, _manually: GlobalIdManually
) -> Response:
    operations = await _json_body(request)
    if not isinstance(operations, list):
        raise InvalidArgument("The body must be a JSON array of patch operations.")
    await gw.upstreams.items.items.PatchItem(
        items_pb2.PatchItemRequest(
            id=id,
            operations_json=json_bytes(operations, "the body"),
            set_global_id_manually=global_id_manually(request),
        )
    )
    return updated()


@router.delete(
    "/items/{id}",
    status_code=204,
    summary="Delete an item (it becomes inactive)",
    responses=schemas.deleted(),
)
async def delete_item(id: int, version: Version, gw: Gw, _c: Caller) -> Response:
    await gw.upstreams.items.items.DeleteItem(core_pb2.Id(id=id))
    return deleted()


@router.get(
    "/items/{id}/children", summary="List an item's children", responses=schemas.page(records.Item)
)
async def children(
    request: Request, id: int, view: Items, gw: Gw, page: Paging, _c: Caller
) -> Response:
    reply = await gw.upstreams.items.items.ListItems(
        items_pb2.ListItemsRequest(
            parent=id, page=page.message(), dates_with_time=dates_with_time(request)
        )
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


@router.get(
    "/items/{id}/parent", summary="Get an item's parent item", responses=schemas.one(records.Item)
)
async def parent(request: Request, id: int, view: Items, gw: Gw, _c: Caller) -> Response:
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
async def location(request: Request, id: int, view: Locations, gw: Gw, _c: Caller) -> Response:
    [item] = await _get(gw, request, [id])
    return await view.one(item["location"])


@router.get(
    "/items/{id}/synceditems",
    summary="Items synchronized with an item",
    responses=schemas.page(records.Item),
)
async def synced_items(
    request: Request, id: int, view: Items, gw: Gw, page: Paging, _c: Caller
) -> Response:
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
    request: Request, id: int, body: SyncedItemBody, version: Version, gw: Gw, _c: Caller
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
async def remove_synced_item(
    id: int, syncedItemId: int, version: Version, gw: Gw, _c: Caller
) -> Response:
    await gw.upstreams.items.sync.RemoveSyncedItem(items_pb2.ItemPair(item=id, other=syncedItemId))
    return deleted()


@router.get(
    "/items/{id}/synceditems/{syncedItemId}/syncstatus",
    summary="Whether two items are in sync",
    responses=schemas.one(records.SyncStatus),
)
async def sync_status(
    id: int, syncedItemId: int, view: SyncStatusView, gw: Gw, _c: Caller
) -> Response:
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


@router.get(
    "/items/{id}/workflowtransitionoptions",
    summary="Workflow steps allowed now",
    responses=schemas.page(records.WorkflowTransition),
)
async def transition_options(
    id: int, view: Transitions, gw: Gw, page: Paging, _c: Caller
) -> Response:
    reply = await gw.upstreams.items.workflow.ListTransitionOptions(core_pb2.Id(id=id))
    data: list[records.WorkflowTransition] = [
        {"id": t.id, "action": t.action, "newStatus": t.new_status, "type": "workflowtransitions"}
        for t in reply.transitions
    ]
    chunk = data[page.start_at : page.start_at + page.max_results]
    return await view.many(
        chunk,
        core_pb2.PageInfo(
            start_index=page.start_at, result_count=len(chunk), total_results=len(data)
        ),
    )


@router.post(
    "/items/{id}/workflowtransitions",
    status_code=201,
    summary="Execute a workflow step",
    responses=schemas.created(),
)
async def transition(
    request: Request, id: int, body: TransitionBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "items")
    await gw.upstreams.items.workflow.Transition(
        items_pb2.TransitionRequest(
            item=id, transition_id=body.transitionId, comment=body.comment or ""
        )
    )
    return created(id, view.location(f"items/{id}"))


@router.put(
    "/items/{id}/location",
    summary="Move an item with its children to another project",
    responses=schemas.updated(records.MovedItems),
)
async def move_item(id: int, body: MoveBody, version: Version, gw: Gw, _c: Caller) -> Response:
    reply = await gw.upstreams.items.moves.MoveItemToProject(
        items_pb2.MoveRequest(item=id, project=body.parent.project)
    )
    # The contract answers once the work started, with an id for it; here it is also done.
    moved: records.MovedItems = {"workId": reply.work_id, "movedItems": list(reply.moved)}
    return updated(moved)


MAX_BULK = 500


@router.patch(
    "/items",
    summary="Change many items with RFC 6902 operations",
    responses=schemas.updated(records.PatchResults),
    openapi_extra=schemas.array_body(ItemPatch, max_items=MAX_BULK),
)
async def patch_items(
    request: Request, version: Version, gw: Gw, _c: Caller, _manually: GlobalIdManually
) -> Response:
    """Body: ``[{"id": 12, "operations": [...]}, ...]``; each item succeeds or fails alone."""
    entries = await _json_body(request)
    if not isinstance(entries, list) or not entries:
        raise InvalidArgument(
            'The body must be a non-empty JSON array of {"id", "operations"} objects.'
        )
    if len(entries) > MAX_BULK:
        raise InvalidArgument(
            f"At most {MAX_BULK} items can be patched at once, got {len(entries)}."
        )
    patches = []
    for number, entry in enumerate(entries):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("id"), int)
            or isinstance(entry.get("id"), bool)
            or not isinstance(entry.get("operations"), list)
            or set(entry) - {"id", "operations"}
        ):
            raise InvalidArgument(
                f'entry {number} must be {{"id": <item id>, "operations": [<patch operations>]}}.'
            )
        patches.append(
            items_pb2.PatchItemRequest(
                id=entry["id"],
                operations_json=json_bytes(entry["operations"], f"entry {number}"),
                set_global_id_manually=global_id_manually(request),
            )
        )
    reply = await gw.upstreams.items.items.PatchItems(items_pb2.PatchItemsRequest(patches=patches))
    results: list[records.PatchResult] = [
        {"id": r.id, "status": r.status, "message": r.message} for r in reply.results
    ]
    outcome: records.PatchResults = {"workId": str(uuid.uuid4()), "results": results}
    return updated(outcome)
