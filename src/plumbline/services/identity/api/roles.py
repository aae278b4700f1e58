"""``plumbline.identity.v1.Roles``."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2 as pb
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.rpc import Context
from plumbline.services.identity.roles import Roles


class RolesServicer(identity_pb2_grpc.RolesServicer):
    """Thin mapping onto ``Roles``."""

    def __init__(self, roles: Roles) -> None:
        self.roles = roles

    async def GetRoles(self, request: core_pb2.Id, context: Context) -> pb.UserRoles:
        return pb.UserRoles(user_id=request.id, roles=await self.roles.get(request.id))

    async def SetRoles(self, request: pb.UserRoles, context: Context) -> pb.UserRoles:
        roles = await self.roles.set(request.user_id, list(request.roles))
        return pb.UserRoles(user_id=request.user_id, roles=roles)
