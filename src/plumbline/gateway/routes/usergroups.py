"""``/usergroups``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import GroupCreate, GroupUpdate, GroupUser, RecordId
from plumbline.gateway.deps import Gateway, Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, deleted, updated

router = APIRouter(prefix="/rest/{version}", tags=["usergroups"])

Groups = Annotated[View, Depends(view_of("usergroups"))]
Members = Annotated[View, Depends(view_of("users"))]


async def _check_project(gw: Gateway, project: int) -> None:
    """A group may belong only to a project that exists."""
    try:
        await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=[project]))
    except NotFound:
        raise InvalidArgument(
            f"project: no project with id {project}; leave it out for an organization group."
        ) from None


@router.get("/usergroups", summary="List user groups", responses=schemas.page(records.UserGroup))
async def list_groups(
    view: Groups, gw: Gw, page: Paging, project: query.OptionalProject
) -> Response:
    message = identity_pb2.ListGroupsRequest(page=page.message())
    if project is not None:
        message.project = project
    reply = await gw.upstreams.identity.groups.ListGroups(message)
    data = [representations.group(g) for g in reply.groups]
    return await view.many(data, reply.page_info)


@router.post(
    "/usergroups", status_code=201, summary="Create a user group", responses=schemas.created()
)
async def create_group(request: Request, body: GroupCreate, version: Version, gw: Gw) -> Response:
    view = View(request, gw, version, "usergroups")
    message = identity_pb2.GroupInput(name=body.name, description=body.description or "")
    if body.project is not None:
        await _check_project(gw, body.project)
        message.project = body.project
    reply = await gw.upstreams.identity.groups.CreateGroup(message)
    return created(reply.id, view.location(f"usergroups/{reply.id}"))


@router.get(
    "/usergroups/{id}", summary="Get a user group", responses=schemas.one(records.UserGroup)
)
async def get_group(id: RecordId, view: Groups, gw: Gw) -> Response:
    data = representations.group(await gw.upstreams.identity.groups.GetGroup(core_pb2.Id(id=id)))
    return await view.one(data)


@router.put("/usergroups/{id}", summary="Update a user group", responses=schemas.updated())
async def update_group(id: RecordId, body: GroupUpdate, gw: Gw) -> Response:
    values = body.model_dump(exclude_unset=True, exclude={"id", "type"})
    message = identity_pb2.GroupInput()
    if "name" in values and values["name"] is not None:
        message.name = values["name"]
    if "description" in values:
        message.description = values["description"] or ""
    if values.get("project") is not None:
        await _check_project(gw, values["project"])
        message.project = values["project"]
    await gw.upstreams.identity.groups.UpdateGroup(
        identity_pb2.UpdateGroupRequest(id=id, group=message)
    )
    return updated()


@router.delete(
    "/usergroups/{id}",
    status_code=204,
    summary="Delete a user group",
    responses=schemas.deleted(),
)
async def delete_group(id: RecordId, gw: Gw) -> Response:
    await gw.upstreams.identity.groups.DeleteGroup(core_pb2.Id(id=id))
    await gw.upstreams.settle_access()
    return deleted()


@router.get(
    "/usergroups/{id}/users",
    summary="List the members of a user group",
    responses=schemas.page(records.User),
)
async def list_members(id: RecordId, view: Members, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.identity.groups.ListGroupMembers(
        identity_pb2.ListGroupMembersRequest(group_id=id, page=page.message())
    )
    data = [representations.user(u) for u in reply.users]
    return await view.many(data, reply.page_info)


@router.post(
    "/usergroups/{id}/users",
    status_code=201,
    summary="Add a user to a user group",
    responses=schemas.created(),
)
async def add_member(
    request: Request, id: RecordId, body: GroupUser, version: Version, gw: Gw
) -> Response:
    view = View(request, gw, version, "users")
    await gw.upstreams.identity.groups.AddGroupMember(
        identity_pb2.GroupMember(group_id=id, user_id=body.user)
    )
    await gw.upstreams.settle_access()
    return created(body.user, view.location(f"usergroups/{id}/users/{body.user}"))


@router.delete(
    "/usergroups/{id}/users/{userId}",
    status_code=204,
    summary="Remove a user from a user group",
    responses=schemas.deleted(),
)
async def remove_member(id: RecordId, userId: RecordId, gw: Gw) -> Response:
    await gw.upstreams.identity.groups.RemoveGroupMember(
        identity_pb2.GroupMember(group_id=id, user_id=userId)
    )
    await gw.upstreams.settle_access()
    return deleted()
