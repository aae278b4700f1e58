"""``plumbline.testmgmt.v1.Watermarks``: how far testmgmt's outbox has got."""

from __future__ import annotations

from plumbline.common.outbox import Outbox
from plumbline.common.rpc import Context
from plumbline.core.v1 import core_pb2
from plumbline.testmgmt.v1 import testmgmt_pb2_grpc


class WatermarksServicer(testmgmt_pb2_grpc.WatermarksServicer):
    """The highest outbox position written so far."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    async def GetWatermark(self, request: core_pb2.Empty, context: Context) -> core_pb2.Watermark:
        return core_pb2.Watermark(source="testmgmt", position=await self.outbox.watermark())
