"""``plumbline.baselines.v1.HistoricTraces``."""

from __future__ import annotations

from plumbline.api.baselines.v1 import baselines_pb2 as pb
from plumbline.api.baselines.v1 import baselines_pb2_grpc
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.dates import format_datetime
from plumbline.common.inbox import targets
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.baselines.tracing import HistoricTraces, Then, Traced


def _reply(traced: Traced, start: int = 0) -> pb.TraceAtReply:
    return pb.TraceAtReply(
        trace=items_pb2.TraceReply(
            roots=traced.roots,
            steps=[message_of(s, items_pb2.TraceStep) for s in traced.steps],
            nodes=traced.nodes,
            page_info=page_info(start, len(traced.roots), traced.total),
        ),
        moment=format_datetime(traced.moment),
    )


class HistoricTracesServicer(baselines_pb2_grpc.HistoricTracesServicer):
    """Thin mapping onto ``HistoricTraces``."""

    def __init__(self, traces: HistoricTraces) -> None:
        self.traces = traces

    async def TraceAt(self, request: pb.TraceAtRequest, context: Context) -> pb.TraceAtReply:
        await self.traces.history.caught_up(targets(request.wait_for))
        start, size = page_of(request.page)
        then = await self._then(request.at)
        traced = await self.traces.trace(
            then,
            request.project,
            request.item_type,
            request.upstream,
            request.depth,
            list(request.relationship_types),
            frozenset(request.test_case_types),
            start,
            size,
        )
        return _reply(traced, start)

    async def CoverageAt(
        self, request: pb.CoverageAtRequest, context: Context
    ) -> pb.CoverageAtReply:
        await self.traces.history.caught_up(targets(request.wait_for))
        then = await self._then(request.at)
        covered = await self.traces.coverage(
            then,
            request.project,
            request.item_type,
            list(request.relationship_types),
            frozenset(request.test_case_types),
        )
        return pb.CoverageAtReply(
            coverage=items_pb2.CoverageReply(
                items=[items_pb2.Covered(item=i, test_cases=c) for i, c in covered],
                relationship_types=request.relationship_types,
            ),
            moment=format_datetime(then.moment),
        )

    async def DescribeAt(self, request: pb.DescribeAtRequest, context: Context) -> pb.TraceAtReply:
        then = await self._then(request.at)
        nodes = await self.traces.describe(
            then, list(request.ids), frozenset(request.test_case_types)
        )
        return pb.TraceAtReply(
            trace=items_pb2.TraceReply(nodes=nodes), moment=format_datetime(then.moment)
        )

    async def _then(self, at: pb.Moment) -> Then:
        return await self.traces.then(
            optional(at, "as_of"), at.baseline if at.HasField("baseline") else None
        )

    async def ImpactAt(self, request: pb.ImpactAtRequest, context: Context) -> pb.TraceAtReply:
        await self.traces.history.caught_up(targets(request.wait_for))
        traced = await self.traces.impact(
            request.item,
            optional(request, "as_of"),
            optional(request, "version"),
            request.depth,
            list(request.relationship_types),
            frozenset(request.test_case_types),
        )
        return _reply(traced)

    async def LatestResultsAt(
        self, request: pb.LatestResultsAtRequest, context: Context
    ) -> testmgmt_pb2.LatestResultList:
        results = await self.traces.latest(
            request.as_of,
            list(request.test_cases),
            optional(request, "test_cycle"),
            optional(request, "test_plan"),
            optional(request, "release"),
        )
        return testmgmt_pb2.LatestResultList(results=results)
