"""``plumbline.items.v1.Baselining``."""

from __future__ import annotations

from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context, optional
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
        members = []
        for m in found:
            member = pb.Member(
                id=m.id,
                version=m.version,
                project=m.project,
                sequence=m.sequence,
                parent_version=m.parent_version,
            )
            if m.parent_item is not None:
                member.parent_item = m.parent_item
            members.append(member)
        return pb.MemberList(members=members)
