"""``plumbline.identity.v1.Permissions``: project permission entries and effective roles."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2 as pb
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.rpc import Context, message_of, optional
from plumbline.services.identity.permissions import Entry, Permissions, entry


def permission_message(row: Any) -> pb.Permission:
    """A permissions row as a message."""
    return message_of(row, pb.Permission, user=row.user_id, group=row.group_id)


def _entries(request: pb.PermissionsChange) -> list[Entry]:
    return [
        entry(optional(p, "user"), optional(p, "group"), p.role or None)
        for p in request.permissions
    ]


class PermissionsServicer(identity_pb2_grpc.PermissionsServicer):
    """Thin mapping onto ``Permissions``."""

    def __init__(self, permissions: Permissions) -> None:
        self.permissions = permissions

    async def GetAccess(self, request: core_pb2.Id, context: Context) -> pb.AccessMap:
        roles = await self.permissions.roles_of(request.id)
        return pb.AccessMap(roles={project: role.value for project, role in roles.items()})

    async def ListPermissions(
        self, request: pb.ListPermissionsRequest, context: Context
    ) -> pb.PermissionList:
        rows = await self.permissions.entries_of(request.project)
        return pb.PermissionList(permissions=[permission_message(r) for r in rows])

    async def ReplacePermissions(
        self, request: pb.PermissionsChange, context: Context
    ) -> pb.PermissionList:
        rows = await self.permissions.replace(request.project, _entries(request))
        return pb.PermissionList(permissions=[permission_message(r) for r in rows])

    async def UpdatePermissions(
        self, request: pb.PermissionsChange, context: Context
    ) -> pb.PermissionList:
        rows = await self.permissions.update(request.project, _entries(request))
        return pb.PermissionList(permissions=[permission_message(r) for r in rows])

    async def DeletePermissions(
        self, request: pb.PermissionsChange, context: Context
    ) -> core_pb2.Empty:
        await self.permissions.delete(request.project, _entries(request))
        return core_pb2.Empty()

    async def PlaceProjects(
        self, request: pb.ProjectPlacements, context: Context
    ) -> core_pb2.Empty:
        placements = [(p.id, optional(p, "parent"), p.is_folder) for p in request.projects]
        await self.permissions.place(placements, request.complete)
        return core_pb2.Empty()

    async def GrantCreator(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.permissions.grant_creator(request.id)
        return core_pb2.Empty()
