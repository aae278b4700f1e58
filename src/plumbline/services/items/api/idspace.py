"""``plumbline.items.v1.IdSpace``: blocks of abstract-item ids and their owners."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context
from plumbline.services.items.idspace import IdSpace


class IdSpaceServicer(items_pb2_grpc.IdSpaceServicer):
    """Thin mapping onto ``IdSpace``."""

    def __init__(self, ids: IdSpace) -> None:
        self.ids = ids

    async def AllocateIdBlock(
        self, request: pb.AllocateIdBlockRequest, context: Context
    ) -> pb.IdBlock:
        first, size = await self.ids.allocate(request.owner)
        return pb.IdBlock(first_id=first, size=size, owner=request.owner)

    async def GetIdOwner(self, request: core_pb2.Id, context: Context) -> pb.IdOwner:
        return pb.IdOwner(owner=await self.ids.owner_of(request.id))

    async def ReserveDocumentKeys(
        self, request: pb.ReserveKeysRequest, context: Context
    ) -> pb.DocumentKeys:
        keys = await self.ids.reserve_keys(request.project, request.item_type, request.count)
        return pb.DocumentKeys(keys=keys)
