"""``/itemtypes``, ``/picklists``, ``/picklistoptions``, ``/relationshiptypes``."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plumbline.common.dates import parse_datetime
from plumbline.core.v1 import core_pb2
from plumbline.gateway import representations
from plumbline.gateway.bodies import FieldCreate, PickListOptionBody
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View
from plumbline.gateway.envelope import created, updated
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["configuration"])


@router.get("/itemtypes", summary="List item types")
async def list_item_types(
    request: Request, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "itemtypes")
    reply = await gw.upstreams.items.configuration.ListItemTypes(
        items_pb2.ListItemTypesRequest(page=page.message())
    )
    return await view.many(
        [representations.item_type(t) for t in reply.item_types], reply.page_info
    )


@router.get("/itemtypes/{itemTypeId}", summary="Get an item type")
async def get_item_type(
    request: Request, itemTypeId: int, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "itemtypes")
    reply = await gw.upstreams.items.configuration.GetItemTypes(core_pb2.IdList(ids=[itemTypeId]))
    return await view.one(representations.item_type(reply.item_types[0]))


@router.post(
    "/itemtypes/{itemTypeId}/fields", status_code=201, summary="Add a field to an item type"
)
async def add_field(
    request: Request, itemTypeId: int, body: FieldCreate, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "itemtypes")
    field = items_pb2.ItemTypeField(
        name=body.name,
        label=body.label,
        field_type=body.fieldType,
        read_only=body.readOnly,
        required=body.required,
        trigger_suspect=body.triggerSuspect,
        synchronize=body.synchronize,
        text_type=body.textType or "",
    )
    if body.pickList is not None:
        field.pick_list = body.pickList
    reply = await gw.upstreams.items.configuration.AddItemTypeField(
        items_pb2.AddFieldRequest(
            item_type=itemTypeId, field=field, pick_list_values=body.pickListValues or []
        )
    )
    gw.catalog.forget()
    return created(reply.id, view.location(f"itemtypes/{itemTypeId}"))


@router.get("/projects/{projectId}/itemtypes", summary="Item types usable in a project")
async def project_item_types(
    request: Request, projectId: int, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "itemtypes")
    await gw.upstreams.items.projects.GetProjects(
        core_pb2.IdList(ids=[projectId])
    )  # 404 if unknown
    reply = await gw.upstreams.items.configuration.ListItemTypes(
        items_pb2.ListItemTypesRequest(page=page.message(), project=projectId)
    )
    return await view.many(
        [representations.item_type(t) for t in reply.item_types], reply.page_info
    )


@router.get("/picklists", summary="List pick lists")
async def list_pick_lists(
    request: Request, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "picklists")
    reply = await gw.upstreams.items.configuration.ListPickLists(page.message())
    return await view.many(
        [representations.pick_list(p) for p in reply.pick_lists], reply.page_info
    )


@router.get("/picklists/{picklistId}", summary="Get a pick list")
async def get_pick_list(
    request: Request, picklistId: int, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "picklists")
    reply = await gw.upstreams.items.configuration.GetPickLists(core_pb2.IdList(ids=[picklistId]))
    return await view.one(representations.pick_list(reply.pick_lists[0]))


@router.get("/picklists/{picklistId}/options", summary="List a pick list's options")
async def list_options(
    request: Request, picklistId: int, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "picklistoptions")
    reply = await gw.upstreams.items.configuration.ListPickListOptions(
        items_pb2.ListOptionsRequest(pick_list=picklistId, page=page.message())
    )
    return await view.many(
        [representations.pick_list_option(o) for o in reply.options], reply.page_info
    )


def _option_input(target: int, body: PickListOptionBody) -> items_pb2.PickListOptionInput:
    message = items_pb2.PickListOptionInput(id=target)
    values = body.model_dump(exclude_unset=True, exclude={"id", "type", "pickList"})
    for wire, field in (
        ("name", "name"),
        ("description", "description"),
        ("value", "value"),
        ("color", "color"),
        ("sortOrder", "sort_order"),
        ("default", "default"),
        ("active", "active"),
    ):
        if values.get(wire) is not None:
            setattr(message, field, values[wire])
    return message


@router.post(
    "/picklists/{picklistId}/options", status_code=201, summary="Add an option to a pick list"
)
async def create_option(
    request: Request,
    picklistId: int,
    body: PickListOptionBody,
    version: Version,
    gw: Gw,
    _c: Caller,
) -> Response:
    view = View(request, gw, version, "picklistoptions")
    reply = await gw.upstreams.items.configuration.CreatePickListOption(
        _option_input(picklistId, body)
    )
    return created(reply.id, view.location(f"picklistoptions/{reply.id}"))


@router.get("/picklistoptions/{picklistOptionId}", summary="Get a pick list option")
async def get_option(
    request: Request, picklistOptionId: int, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "picklistoptions")
    reply = await gw.upstreams.items.configuration.GetPickListOptions(
        core_pb2.IdList(ids=[picklistOptionId])
    )
    return await view.one(representations.pick_list_option(reply.options[0]))


@router.put("/picklistoptions/{picklistOptionId}", summary="Update a pick list option")
async def update_option(
    picklistOptionId: int, body: PickListOptionBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    await gw.upstreams.items.configuration.UpdatePickListOption(
        _option_input(picklistOptionId, body)
    )
    return updated()


@router.get("/relationshiptypes", summary="List relationship types")
async def list_relationship_types(
    request: Request, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "relationshiptypes")
    reply = await gw.upstreams.items.configuration.ListRelationshipTypes(page.message())
    return await view.many(
        [representations.relationship_type(r) for r in reply.relationship_types], reply.page_info
    )


@router.get("/relationshiptypes/{id}", summary="Get a relationship type")
async def get_relationship_type(
    request: Request, id: int, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "relationshiptypes")
    timestamp = request.query_params.get("timestamp")
    if timestamp is not None:
        parse_datetime(timestamp, "timestamp")  # accepted; types are not versioned
    reply = await gw.upstreams.items.configuration.GetRelationshipTypes(core_pb2.IdList(ids=[id]))
    return await view.one(representations.relationship_type(reply.relationship_types[0]))
