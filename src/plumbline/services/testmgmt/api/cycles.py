"""``plumbline.testmgmt.v1.TestCycles``."""

from __future__ import annotations

import json

from plumbline.api.core.v1 import core_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2 as pb
from plumbline.api.testmgmt.v1 import testmgmt_pb2_grpc
from plumbline.common import jsonpatch
from plumbline.common.rpc import Context, message_of, page_of
from plumbline.services.testmgmt.api.messages import RecordMessages
from plumbline.services.testmgmt.cycles import Cycles


class TestCyclesServicer(testmgmt_pb2_grpc.TestCyclesServicer):
    """Thin mapping onto ``Cycles``."""

    def __init__(self, cycles: Cycles, render: RecordMessages) -> None:
        self.cycles = cycles
        self.render = render

    async def ListCycles(self, request: pb.ListCyclesRequest, context: Context) -> pb.RecordPage:
        start, size = page_of(request.page)
        rows, total = await self.cycles.page(request.plan, start, size)
        return await self.render.page(rows, start, total, request.dates_with_time)

    async def CreateCycle(self, request: pb.CycleInput, context: Context) -> core_pb2.Created:
        fields = json.loads(request.fields_json or b"{}")
        cycle = await self.cycles.create(request.plan, fields, request.generation_json)
        return core_pb2.Created(id=cycle)

    async def UpdateCycle(self, request: pb.CycleInput, context: Context) -> core_pb2.Empty:
        fields = json.loads(request.fields_json or b"{}")
        await self.cycles.update(request.id, fields, request.generation_json)
        return core_pb2.Empty()

    async def PatchCycle(self, request: pb.PatchRequest, context: Context) -> core_pb2.Empty:
        await self.cycles.patch(request.id, jsonpatch.operations(request.operations_json))
        return core_pb2.Empty()

    async def DeleteCycle(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.cycles.delete(request.id)
        return core_pb2.Empty()

    async def GetCycleGroup(self, request: pb.CycleGroupRef, context: Context) -> pb.CycleGroup:
        cycle, group = await self.cycles.group(request.cycle, request.group)
        return message_of(group, pb.CycleGroup, test_group=group.id, test_cycle=cycle.id)
