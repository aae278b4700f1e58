"""``plumbline.testmgmt.v1.Results``: JUnit reports from CI."""

from __future__ import annotations

from collections.abc import AsyncIterator

from plumbline.api.testmgmt.v1 import testmgmt_pb2 as pb
from plumbline.api.testmgmt.v1 import testmgmt_pb2_grpc
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import Context, message_of
from plumbline.services.testmgmt.results import Answer, Results


def answer_message(answer: Answer) -> pb.IngestReply:
    """An ingest's answer as a message."""
    return message_of(answer, pb.IngestReply)


class ResultsServicer(testmgmt_pb2_grpc.ResultsServicer):
    """Thin mapping onto ``Results``: the first chunk names the cycle and the key."""

    def __init__(self, results: Results) -> None:
        self.results = results

    async def IngestJUnit(
        self, request_iterator: AsyncIterator[pb.ReportChunk], context: Context
    ) -> pb.IngestReply:
        first = await anext(request_iterator, None)
        if first is None or not first.test_cycle:
            raise InvalidArgument("the report's first chunk must name the test cycle")

        async def chunks() -> AsyncIterator[bytes]:
            yield first.data
            async for chunk in request_iterator:
                yield chunk.data

        answer = await self.results.ingest(first.test_cycle, first.idempotency_key, chunks())
        return answer_message(answer)
