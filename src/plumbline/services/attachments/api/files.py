"""``plumbline.attachments.v1.Files``: an attachment's file in chunks, both ways."""

from __future__ import annotations

from collections.abc import AsyncIterator

from plumbline.api.attachments.v1 import attachments_pb2 as pb
from plumbline.api.attachments.v1 import attachments_pb2_grpc
from plumbline.api.core.v1 import core_pb2
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import Context, message_of, optional
from plumbline.common.streams import read_ahead
from plumbline.services.attachments.files import FileInfo, Files


def _info(info: FileInfo) -> pb.FileInfo:
    return message_of(info, pb.FileInfo)


class FilesServicer(attachments_pb2_grpc.FilesServicer):
    """Streams between gRPC and ``Files``."""

    def __init__(self, files: Files) -> None:
        self.files = files

    async def CheckUpload(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.files.check_upload(request.id)
        return core_pb2.Empty()

    async def Upload(
        self, request_iterator: AsyncIterator[pb.UploadChunk], context: Context
    ) -> pb.FileInfo:
        first = await anext(request_iterator, None)
        if first is None or first.WhichOneof("part") != "header":
            raise InvalidArgument("An upload starts with its header.")
        header = first.header

        async def data() -> AsyncIterator[bytes]:
            async for chunk in read_ahead(request_iterator, depth=2):
                if chunk.WhichOneof("part") != "data":
                    raise InvalidArgument("An upload has one header, then data.")
                yield chunk.data

        info = await self.files.upload(
            header.attachment, header.file_name, header.mime_type, data()
        )
        return _info(info)

    async def Download(
        self, request: pb.DownloadRequest, context: Context
    ) -> AsyncIterator[pb.DownloadChunk]:
        served, chunks = await self.files.download(
            request.attachment,
            optional(request, "first"),
            optional(request, "last"),
            optional(request, "suffix_length"),
            optional(request, "if_range"),
        )
        yield pb.DownloadChunk(
            served=pb.Served(
                file=_info(served.file),
                start=served.start,
                end=served.end,
                partial=served.partial,
                unsatisfiable=served.unsatisfiable,
            )
        )
        if chunks is not None:
            async for chunk in read_ahead(chunks):
                yield pb.DownloadChunk(data=chunk)
