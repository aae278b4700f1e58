"""Item types, pick lists and their options, relationship types and rule sets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common.dates import parse_datetime
from plumbline.common.rpc import page_info
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import FieldCreate, FieldUpdate, PickListOptionBody
from plumbline.gateway.deps import LABS_ONLY, Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, deleted, updated

router = APIRouter(prefix="/rest/{version}", tags=["configuration"])


RuleSets = Annotated[View, Depends(view_of("relationshiprulesets"))]


Projects = Annotated[View, Depends(view_of("projects"))]


ItemTypes = Annotated[View, Depends(view_of("itemtypes"))]


PickLists = Annotated[View, Depends(view_of("picklists"))]


Options = Annotated[View, Depends(view_of("picklistoptions"))]


RelationshipTypes = Annotated[View, Depends(view_of("relationshiptypes"))]


def _timestamp(values: Sequence[str]) -> None:
    # Accepted and checked; relationship types are not versioned, so it changes nothing.
    if values:
        parse_datetime(values[-1], "timestamp")


Timestamp = Annotated[
    None,
    Depends(
        query.parameter(
            "timestamp",
            {"type": "string"},
            _timestamp,
            description="The type as it was then (yyyy-MM-dd'T'HH:mm:ss.SSSZ); types have "
            "no history, so every timestamp gives today's.",
        )
    ),
]


@router.get("/itemtypes", summary="List item types", responses=schemas.page(records.ItemType))
async def list_item_types(view: ItemTypes, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.configuration.ListItemTypes(
        items_pb2.ListItemTypesRequest(page=page.message())
    )
    return await view.many(
        [representations.item_type(t) for t in reply.item_types], reply.page_info
    )


@router.get(
    "/itemtypes/{itemTypeId}", summary="Get an item type", responses=schemas.one(records.ItemType)
)
async def get_item_type(itemTypeId: int, view: ItemTypes, gw: Gw) -> Response:
    reply = await gw.upstreams.items.configuration.GetItemTypes(core_pb2.IdList(ids=[itemTypeId]))
    return await view.one(representations.item_type(reply.item_types[0]))


@router.post(
    "/itemtypes/{itemTypeId}/fields",
    status_code=201,
    summary="Add a field to an item type",
    description="Organization administrators only. The field is custom: it is stored as "
    "name$<typeId>. Refused (400): a name that is not a letter followed by letters, digits "
    "and _, is over 100 characters, or is the name of a system field in any case "
    "(documentKey, globalId, name, testRunSteps, executionDate, testCase, ...); a required "
    "field of the test run type (the system creates every run); a required field of the "
    "other built-in types (test case, plan, cycle, attachment) unless it is a LOOKUP whose "
    "pick list has a default option; the name of a field deleted from the type.",
    responses=schemas.created(),
)
async def add_field(
    request: Request, itemTypeId: int, body: FieldCreate, version: Version, gw: Gw
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


@router.patch(
    "/itemtypes/{itemTypeId}/fields/{fieldId}",
    summary="Change a custom field's label or flags (labs)",
    description="Organization administrators only. The body is a JSON object of the "
    "members to change (not RFC 6902 operations): label, required, readOnly, "
    "triggerSuspect, synchronize. A field's name, type and pick list never change. Only "
    "custom fields (name$<typeId>) change; a system field is a 400, an unknown field a "
    "404. The rules of POST .../fields for required fields apply to the changed field.",
    responses=schemas.updated(),
    dependencies=[LABS_ONLY],
)
async def update_field(itemTypeId: int, fieldId: int, body: FieldUpdate, gw: Gw) -> Response:
    message = items_pb2.UpdateFieldRequest(item_type=itemTypeId, field=fieldId)
    for wire, name in (
        ("label", "label"),
        ("required", "required"),
        ("readOnly", "read_only"),
        ("triggerSuspect", "trigger_suspect"),
        ("synchronize", "synchronize"),
    ):
        value = getattr(body, wire)
        if value is not None:
            setattr(message, name, value)
    await gw.upstreams.items.configuration.UpdateItemTypeField(message)
    gw.catalog.forget()
    return updated()


@router.delete(
    "/itemtypes/{itemTypeId}/fields/{fieldId}",
    status_code=204,
    summary="Delete a custom field of an item type (labs)",
    description="Organization administrators only. The field leaves its type: records "
    "keep its values but no read shows them, and a record's next write drops them; "
    "versions of records stay as they were. Its name is not taken again on this type. "
    "Only custom fields (name$<typeId>) are deleted; a system field, or the status field "
    "of a workflow, is a 400, an unknown field a 404.",
    responses=schemas.deleted(),
    dependencies=[LABS_ONLY],
)
async def delete_field(itemTypeId: int, fieldId: int, gw: Gw) -> Response:
    await gw.upstreams.items.configuration.DeleteItemTypeField(
        items_pb2.FieldRef(item_type=itemTypeId, field=fieldId)
    )
    gw.catalog.forget()
    return deleted()


@router.get(
    "/projects/{projectId}/itemtypes",
    summary="Item types usable in a project",
    responses=schemas.page(records.ItemType),
)
async def project_item_types(projectId: int, view: ItemTypes, gw: Gw, page: Paging) -> Response:
    await gw.upstreams.items.projects.GetProjects(
        core_pb2.IdList(ids=[projectId])
    )  # 404 if unknown
    reply = await gw.upstreams.items.configuration.ListItemTypes(
        items_pb2.ListItemTypesRequest(page=page.message(), project=projectId)
    )
    return await view.many(
        [representations.item_type(t) for t in reply.item_types], reply.page_info
    )


@router.put(
    "/projects/{projectId}/itemtypes/{itemTypeId}",
    summary="Add an item type to a project",
    description="Makes the item type available in the project, for its organization or "
    "project administrators. Every item type is available in every project (configuration "
    "is organization-wide), so this confirms that the project and the type exist and "
    "changes nothing: repeating it answers the same. A project folder is refused (400).",
    responses=schemas.updated(),
)
async def add_project_item_type(projectId: int, itemTypeId: int, gw: Gw) -> Response:
    await gw.upstreams.items.projects.AddProjectItemType(
        items_pb2.ProjectItemTypeRequest(project=projectId, item_type=itemTypeId)
    )
    return updated()


@router.get("/picklists", summary="List pick lists", responses=schemas.page(records.PickList))
async def list_pick_lists(view: PickLists, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.configuration.ListPickLists(page.message())
    return await view.many(
        [representations.pick_list(p) for p in reply.pick_lists], reply.page_info
    )


@router.get(
    "/picklists/{picklistId}", summary="Get a pick list", responses=schemas.one(records.PickList)
)
async def get_pick_list(picklistId: int, view: PickLists, gw: Gw) -> Response:
    reply = await gw.upstreams.items.configuration.GetPickLists(core_pb2.IdList(ids=[picklistId]))
    return await view.one(representations.pick_list(reply.pick_lists[0]))


@router.get(
    "/picklists/{picklistId}/options",
    summary="List a pick list's options",
    responses=schemas.page(records.PickListOption),
)
async def list_options(picklistId: int, view: Options, gw: Gw, page: Paging) -> Response:
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
    "/picklists/{picklistId}/options",
    status_code=201,
    summary="Add an option to a pick list",
    responses=schemas.created(),
)
async def create_option(
    request: Request,
    picklistId: int,
    body: PickListOptionBody,
    version: Version,
    gw: Gw,
) -> Response:
    view = View(request, gw, version, "picklistoptions")
    reply = await gw.upstreams.items.configuration.CreatePickListOption(
        _option_input(picklistId, body)
    )
    return created(reply.id, view.location(f"picklistoptions/{reply.id}"))


@router.get(
    "/picklistoptions/{picklistOptionId}",
    summary="Get a pick list option",
    responses=schemas.one(records.PickListOption),
)
async def get_option(picklistOptionId: int, view: Options, gw: Gw) -> Response:
    reply = await gw.upstreams.items.configuration.GetPickListOptions(
        core_pb2.IdList(ids=[picklistOptionId])
    )
    return await view.one(representations.pick_list_option(reply.options[0]))


@router.put(
    "/picklistoptions/{picklistOptionId}",
    summary="Update a pick list option",
    responses=schemas.updated(),
)
async def update_option(picklistOptionId: int, body: PickListOptionBody, gw: Gw) -> Response:
    await gw.upstreams.items.configuration.UpdatePickListOption(
        _option_input(picklistOptionId, body)
    )
    return updated()


@router.get(
    "/relationshiptypes",
    summary="List relationship types",
    responses=schemas.page(records.RelationshipType),
)
async def list_relationship_types(view: RelationshipTypes, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.configuration.ListRelationshipTypes(page.message())
    return await view.many(
        [representations.relationship_type(r) for r in reply.relationship_types], reply.page_info
    )


@router.get(
    "/relationshiptypes/{id}",
    summary="Get a relationship type",
    responses=schemas.one(records.RelationshipType),
)
async def get_relationship_type(
    id: int, view: RelationshipTypes, gw: Gw, _timestamp: Timestamp
) -> Response:
    reply = await gw.upstreams.items.configuration.GetRelationshipTypes(core_pb2.IdList(ids=[id]))
    return await view.one(representations.relationship_type(reply.relationship_types[0]))


@router.get(
    "/relationshiprulesets",
    summary="List relationship rule sets",
    responses=schemas.page(records.RelationshipRuleSet),
)
async def list_rule_sets(view: RuleSets, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.configuration.ListRuleSets(page.message())
    return await view.many([representations.rule_set(r) for r in reply.rule_sets], reply.page_info)


@router.get(
    "/relationshiprulesets/{id}",
    summary="Get a relationship rule set",
    responses=schemas.one(records.RelationshipRuleSet),
)
async def get_rule_set(id: int, view: RuleSets, gw: Gw) -> Response:
    reply = await gw.upstreams.items.configuration.GetRuleSets(core_pb2.IdList(ids=[id]))
    return await view.one(representations.rule_set(reply.rule_sets[0]))


@router.get(
    "/relationshiprulesets/{id}/projects",
    summary="Projects that use a rule set",
    responses=schemas.page(records.Project),
)
async def rule_set_projects(id: int, view: Projects, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.configuration.GetRuleSets(core_pb2.IdList(ids=[id]))
    project_ids = list(reply.rule_sets[0].projects)
    chunk = project_ids[page.start_at : page.start_at + page.max_results]
    found = (
        await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=chunk)) if chunk else None
    )
    data = [representations.project(p) for p in found.projects] if found else []
    return await view.many(
        data,
        page_info(page.start_at, len(data), len(project_ids)),
    )
