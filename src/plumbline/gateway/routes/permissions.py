"""``/projects/{projectId}/permissions``: who has which role on a project or folder.

The contract names these operations (9.2) but shows no shapes; ours are documented in
``records.Permission`` and ``docs/architecture.md``. Every change answers once every
service that checks access has caught up with it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import page_info
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import PermissionEntry, RecordId
from plumbline.gateway.deps import Gw, View, view_of
from plumbline.gateway.envelope import deleted

router = APIRouter(prefix="/rest/{version}", tags=["permissions"])

Permissions = Annotated[View, Depends(view_of("permissions"))]
Users = Annotated[
    list[int],
    Depends(query.integers("user", description="Remove the entry of this user (repeatable).")),
]
Groups = Annotated[
    list[int],
    Depends(
        query.integers("userGroup", description="Remove the entry of this user group (repeatable).")
    ),
]
_LIST = schemas.page(records.Permission)


def _change(project: int, entries: list[PermissionEntry]) -> identity_pb2.PermissionsChange:
    message = identity_pb2.PermissionsChange(project=project)
    for entry in entries:
        if (entry.user is None) == (entry.userGroup is None):
            raise InvalidArgument("Each permission entry needs exactly one of user and userGroup.")
        item = message.permissions.add(role=entry.role)
        if entry.user is not None:
            item.user = entry.user
        else:
            assert entry.userGroup is not None
            item.group = entry.userGroup
    return message


async def _answer(view: View, reply: identity_pb2.PermissionList) -> Response:
    data = [representations.permission(p) for p in reply.permissions]
    return await view.many(data, page_info(0, len(data), len(data)))


async def _exists(gw: Gw, project: int) -> None:
    """The project or folder exists and the caller may see it (items decides)."""
    await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=[project]))


@router.get(
    "/projects/{projectId}/permissions",
    summary="List the permission entries of a project or folder (its administrators)",
    responses=_LIST,
)
async def list_permissions(projectId: RecordId, view: Permissions, gw: Gw) -> Response:
    await _exists(gw, projectId)
    reply = await gw.upstreams.identity.permissions.ListPermissions(
        identity_pb2.ListPermissionsRequest(project=projectId)
    )
    return await _answer(view, reply)


@router.post(
    "/projects/{projectId}/permissions",
    summary="Replace every permission entry of a project or folder with the given ones",
    responses=_LIST,
)
async def replace_permissions(
    projectId: RecordId, body: list[PermissionEntry], view: Permissions, gw: Gw
) -> Response:
    await _exists(gw, projectId)
    reply = await gw.upstreams.identity.permissions.ReplacePermissions(_change(projectId, body))
    await gw.upstreams.settle_access()
    return await _answer(view, reply)


@router.put(
    "/projects/{projectId}/permissions",
    summary="Add or change the given users' and groups' entries, leaving the others",
    responses=_LIST,
)
async def update_permissions(
    projectId: RecordId, body: list[PermissionEntry], view: Permissions, gw: Gw
) -> Response:
    await _exists(gw, projectId)
    reply = await gw.upstreams.identity.permissions.UpdatePermissions(_change(projectId, body))
    await gw.upstreams.settle_access()
    return await _answer(view, reply)


@router.delete(
    "/projects/{projectId}/permissions",
    status_code=204,
    summary="Remove the entries of the users and groups named in user and userGroup",
    responses=schemas.deleted(),
)
async def delete_permissions(
    projectId: RecordId, user: Users, userGroup: Groups, gw: Gw
) -> Response:
    await _exists(gw, projectId)
    message = identity_pb2.PermissionsChange(project=projectId)
    for user_id in user:
        message.permissions.add(user=user_id)
    for group_id in userGroup:
        message.permissions.add(group=group_id)
    if not message.permissions:
        raise InvalidArgument("Name the entries to remove with user or userGroup (repeatable).")
    await gw.upstreams.identity.permissions.DeletePermissions(message)
    await gw.upstreams.settle_access()
    return deleted()
