"""``plumbline.testmgmt.v1.TestPlans``."""

from __future__ import annotations

import json

from plumbline.api.core.v1 import core_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2 as pb
from plumbline.api.testmgmt.v1 import testmgmt_pb2_grpc
from plumbline.common import jsonpatch
from plumbline.common.rpc import Context, page_of
from plumbline.services.testmgmt.api.messages import RecordMessages
from plumbline.services.testmgmt.plans import Plans


class TestPlansServicer(testmgmt_pb2_grpc.TestPlansServicer):
    """Thin mapping onto ``Plans``."""

    def __init__(self, plans: Plans, render: RecordMessages) -> None:
        self.plans = plans
        self.render = render

    async def ListPlans(self, request: pb.ListPlansRequest, context: Context) -> pb.RecordPage:
        start, size = page_of(request.page)
        rows, total = await self.plans.page(request.project, start, size)
        return await self.render.page(rows, start, total, request.dates_with_time)

    async def CreatePlan(self, request: pb.PlanInput, context: Context) -> core_pb2.Created:
        fields = json.loads(request.fields_json or b"{}")
        return core_pb2.Created(id=await self.plans.create(request.project, fields))

    async def UpdatePlan(self, request: pb.UpdateRequest, context: Context) -> core_pb2.Empty:
        await self.plans.update(request.id, json.loads(request.fields_json or b"{}"))
        return core_pb2.Empty()

    async def PatchPlan(self, request: pb.PatchRequest, context: Context) -> core_pb2.Empty:
        await self.plans.patch(request.id, jsonpatch.operations(request.operations_json))
        return core_pb2.Empty()

    async def DeletePlan(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.plans.delete(request.id)
        return core_pb2.Empty()

    async def SetArchived(self, request: pb.SetArchivedRequest, context: Context) -> core_pb2.Empty:
        await self.plans.set_archived(request.id, request.archived)
        return core_pb2.Empty()
