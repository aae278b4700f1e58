"""``plumbline.items.v1.Baselining``."""

from __future__ import annotations

from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context, message_of, optional
from plumbline.services.items.baselining import Baselining, Origin


class BaseliningServicer(items_pb2_grpc.BaseliningServicer):
    """Thin mapping onto ``Baselining.members``."""

    def __init__(self, baselining: Baselining) -> None:
        self.baselining = baselining

    async def ListMembers(self, request: pb.MembersRequest, context: Context) -> pb.MemberList:
        found = await self.baselining.members(
            Origin(
                project=request.project,
                item=optional(request, "item"),
                filter=optional(request, "filter"),
                release=optional(request, "release"),
                items=tuple(request.items),
            )
        )
        return pb.MemberList(members=[message_of(m, pb.Member) for m in found])
