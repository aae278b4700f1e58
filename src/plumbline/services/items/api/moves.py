"""``plumbline.items.v1.Moves``: places in the tree."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context, optional
from plumbline.services.items.moves import Moves


class MovesServicer(items_pb2_grpc.MovesServicer):
    """Thin mapping onto ``Moves``."""

    def __init__(self, moves: Moves) -> None:
        self.moves = moves

    async def MoveItemToProject(self, request: pb.MoveRequest, context: Context) -> pb.MoveReply:
        work_id, moved = await self.moves.to_project(request.item, request.project)
        return pb.MoveReply(work_id=work_id, moved=moved)

    async def PlaceItem(self, request: pb.PlaceItemRequest, context: Context) -> core_pb2.Empty:
        await self.moves.within_project(
            request.item,
            optional(request, "parent_item"),
            optional(request, "parent_project"),
            optional(request, "peer"),
        )
        return core_pb2.Empty()
