"""``plumbline.attachments.v1.Attachments``: records by id, in a project, the search,
locks and deletion."""

from __future__ import annotations

import json

from plumbline.api.attachments.v1 import attachments_pb2 as pb
from plumbline.api.attachments.v1 import attachments_pb2_grpc
from plumbline.api.core.v1 import core_pb2
from plumbline.common.errors import InvalidArgument
from plumbline.common.recordsearch import Search
from plumbline.common.rpc import Context, page_of
from plumbline.services.attachments.api.messages import AttachmentMessages
from plumbline.services.attachments.files import Files
from plumbline.services.attachments.records import Records


class AttachmentsServicer(attachments_pb2_grpc.AttachmentsServicer):
    """Thin mapping onto ``Records``."""

    def __init__(self, records: Records, files: Files, render: AttachmentMessages) -> None:
        self.records = records
        self.files = files
        self.render = render

    async def CreateAttachment(
        self, request: pb.AttachmentInput, context: Context
    ) -> core_pb2.Created:
        try:
            values = json.loads(request.fields_json or b"{}")
        except ValueError:
            raise InvalidArgument("fields must be a JSON object.") from None
        return core_pb2.Created(id=await self.records.create(request.project, values))

    async def GetAttachments(
        self, request: pb.GetAttachmentsRequest, context: Context
    ) -> pb.AttachmentList:
        rows = await self.records.get(list(request.ids), request.skip_missing)
        return pb.AttachmentList(attachments=await self.render.many(rows, request.dates_with_time))

    async def SearchAttachments(
        self, request: core_pb2.RecordSearch, context: Context
    ) -> pb.AttachmentPage:
        start, size = page_of(request.page)
        rows, total = await self.records.search(Search.of(request), start, size)
        return await self.render.page(rows, start, total, request.dates_with_time)

    async def SetLock(self, request: pb.SetLockRequest, context: Context) -> core_pb2.Empty:
        await self.records.set_lock(request.id, request.locked)
        return core_pb2.Empty()

    async def DeleteAttachment(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        blob = await self.records.delete(request.id)
        if blob is not None:
            await self.files.discard(blob)
        return core_pb2.Empty()
