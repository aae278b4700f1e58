"""``plumbline.items.v1.Traceability``."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.items.trace import Traced, Tracing


def trace_reply(traced: Traced, start: int = 0) -> pb.TraceReply:
    """A trace as its message."""
    return pb.TraceReply(
        roots=traced.roots,
        steps=[message_of(s, pb.TraceStep) for s in traced.steps],
        nodes=[message_of(n, pb.TraceNode) for n in traced.nodes],
        page_info=page_info(start, len(traced.roots), traced.total),
    )


class TraceabilityServicer(items_pb2_grpc.TraceabilityServicer):
    """Thin mapping onto ``Tracing``."""

    def __init__(self, tracing: Tracing) -> None:
        self.tracing = tracing

    async def Trace(self, request: pb.TraceRequest, context: Context) -> pb.TraceReply:
        start, size = page_of(request.page)
        traced = await self.tracing.trace(
            request.project,
            request.item_type,
            request.upstream,
            request.depth,
            list(request.relationship_types),
            start,
            size,
        )
        return trace_reply(traced, start)

    async def Impact(self, request: pb.ImpactRequest, context: Context) -> pb.TraceReply:
        traced = await self.tracing.impact(
            request.item, request.depth, list(request.relationship_types)
        )
        return trace_reply(traced)

    async def Coverage(self, request: pb.CoverageRequest, context: Context) -> pb.CoverageReply:
        covered, kept = await self.tracing.coverage(
            request.project,
            request.item_type,
            list(request.relationship_types),
            optional(request, "filter"),
        )
        return pb.CoverageReply(
            items=[pb.Covered(item=c.item, test_cases=c.test_cases) for c in covered],
            relationship_types=kept,
        )

    async def DescribeNodes(self, request: core_pb2.IdList, context: Context) -> pb.TraceReply:
        nodes = await self.tracing.describe(list(request.ids))
        return pb.TraceReply(nodes=[message_of(n, pb.TraceNode) for n in nodes])

    async def VerificationTypes(
        self, request: core_pb2.IdList, context: Context
    ) -> core_pb2.IdList:
        return core_pb2.IdList(ids=await self.tracing.verification_types(list(request.ids)))
