"""``plumbline.testmgmt.v1.TestRecords``: any test record by id, the search, locks."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2 as pb
from plumbline.api.testmgmt.v1 import testmgmt_pb2_grpc
from plumbline.common.recordsearch import Search
from plumbline.common.rpc import Context, page_of
from plumbline.services.testmgmt.api.messages import RecordMessages, kind_of
from plumbline.services.testmgmt.records import Records


class TestRecordsServicer(testmgmt_pb2_grpc.TestRecordsServicer):
    """Thin mapping onto ``Records``."""

    def __init__(self, records: Records, render: RecordMessages) -> None:
        self.records = records
        self.render = render

    async def GetRecords(self, request: pb.GetRecordsRequest, context: Context) -> pb.RecordList:
        rows = await self.records.get(
            list(request.ids), kind_of(request.kind), request.skip_missing
        )
        return pb.RecordList(records=await self.render.many(rows, request.dates_with_time))

    async def SearchRecords(
        self, request: core_pb2.RecordSearch, context: Context
    ) -> pb.RecordPage:
        start, size = page_of(request.page)
        rows, total = await self.records.search(Search.of(request), start, size)
        return await self.render.page(rows, start, total, request.dates_with_time)

    async def SetLock(self, request: pb.SetLockRequest, context: Context) -> core_pb2.Empty:
        await self.records.set_lock(request.id, request.locked, kind_of(request.kind))
        return core_pb2.Empty()
