"""``plumbline.testmgmt.v1.TestRuns``."""

from __future__ import annotations

import json

from plumbline.api.core.v1 import core_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2 as pb
from plumbline.api.testmgmt.v1 import testmgmt_pb2_grpc
from plumbline.common import jsonpatch
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import Context, message_of, optional, page_of
from plumbline.services.testmgmt.api.messages import RecordMessages
from plumbline.services.testmgmt.latest import LatestResults, Scope
from plumbline.services.testmgmt.runs import Runs


class TestRunsServicer(testmgmt_pb2_grpc.TestRunsServicer):
    """Thin mapping onto ``Runs``."""

    def __init__(self, runs: Runs, render: RecordMessages, latest: LatestResults) -> None:
        self.runs = runs
        self.render = render
        self.latest = latest

    async def LatestResults(
        self, request: pb.LatestResultsRequest, context: Context
    ) -> pb.LatestResultList:
        scope = Scope(
            optional(request, "test_cycle"),
            optional(request, "test_plan"),
            optional(request, "release"),
        )
        found = await self.latest.latest(list(request.test_cases), scope)
        return pb.LatestResultList(results=[message_of(f, pb.LatestResult) for f in found])

    async def ListRuns(self, request: pb.ListRunsRequest, context: Context) -> pb.RecordPage:
        start, size = page_of(request.page)
        rows, total = await self.runs.search(
            list(request.test_cycles),
            list(request.test_plans),
            list(request.test_cases),
            request.sort_field,
            request.sort_descending,
            start,
            size,
        )
        return await self.render.page(rows, start, total, request.dates_with_time)

    async def UpdateRun(self, request: pb.UpdateRequest, context: Context) -> core_pb2.Empty:
        await self.runs.update(request.id, json.loads(request.fields_json or b"{}"))
        return core_pb2.Empty()

    async def PatchRun(self, request: pb.PatchRequest, context: Context) -> core_pb2.Empty:
        await self.runs.patch(request.id, jsonpatch.operations(request.operations_json))
        return core_pb2.Empty()

    async def DeleteRun(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.runs.delete(request.id)
        return core_pb2.Empty()

    async def RefreshRun(self, request: core_pb2.Id, context: Context) -> core_pb2.Created:
        return core_pb2.Created(id=await self.runs.refresh(request.id))

    async def UpdateRuns(
        self, request: pb.UpdateRunsRequest, context: Context
    ) -> pb.UpdateRunsReply:
        updates = []
        for number, update in enumerate(request.updates):
            try:
                values = json.loads(update.fields_json or b"{}")
            except ValueError:
                raise InvalidArgument(f"element {number}: fields is not JSON") from None
            updates.append((update.id, values))
        outcomes = await self.runs.update_many(updates)
        return pb.UpdateRunsReply(
            results=[
                pb.RunUpdateResult(
                    id=o.id, status=o.status, message=o.message, test_run_status=o.run_status
                )
                for o in outcomes
            ]
        )
