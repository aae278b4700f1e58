"""``plumbline.identity.v1.CorsSettings``."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2 as pb
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.rpc import Context
from plumbline.services.identity.cors import CorsOrigins


class CorsSettingsServicer(identity_pb2_grpc.CorsSettingsServicer):
    """Thin mapping onto ``CorsOrigins``."""

    def __init__(self, origins: CorsOrigins) -> None:
        self.origins = origins

    async def GetCorsDomains(self, request: core_pb2.Empty, context: Context) -> pb.CorsDomains:
        return pb.CorsDomains(domains=await self.origins.get())

    async def SetCorsDomains(self, request: pb.CorsDomains, context: Context) -> pb.CorsDomains:
        return pb.CorsDomains(domains=await self.origins.replace(list(request.domains)))
