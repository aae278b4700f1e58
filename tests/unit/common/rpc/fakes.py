"""Fake servicers the gRPC tests call, over the network and in-process alike."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

from plumbline.api.attachments.v1 import attachments_pb2, attachments_pb2_grpc
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.common import errors
from plumbline.common.context import Principal, current_principal, principal_var, request_id_var
from plumbline.common.rpc import Context

#: request id -> the domain error the fake servicers raise for it.
RAISES: dict[int, type[errors.PlumblineError]] = {
    100 + n: error
    for n, error in enumerate(e for e in errors.GRPC_CODES if e is not errors.Internal)
}
CRASH = 500
HUGE = 600  # answered with an owner name of HUGE_REPLY characters
HUGE_REPLY = 64 * 1024
SLOW = 700  # answered never: the call waits until it is cancelled
GENERIC = "The server could not complete the request."


@contextlib.contextmanager
def calling_as(principal: Principal | None, request_id: str) -> Iterator[None]:
    """The caller's principal and request id while the block runs."""
    p_token = principal_var.set(principal)
    r_token = request_id_var.set(request_id)
    try:
        yield
    finally:
        request_id_var.reset(r_token)
        principal_var.reset(p_token)


@dataclass
class Waits:
    """What a fake servicer's call that never answers went through."""

    started: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)

    async def forever(self) -> None:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


@dataclass
class FakeIdSpace(items_pb2_grpc.IdSpaceServicer):
    """Answers GetIdOwner with what it saw, or fails as the id asks."""

    seen: list[tuple[Principal | None, str]] = field(default_factory=list)
    remaining: list[float | None] = field(default_factory=list)
    slow: Waits = field(default_factory=Waits)

    async def AllocateIdBlock(
        self, request: items_pb2.AllocateIdBlockRequest, context: Context
    ) -> items_pb2.IdBlock:
        # A request as large as its owner name: the size tests send big ones.
        return items_pb2.IdBlock(first_id=1, size=1000)

    async def GetIdOwner(self, request: core_pb2.Id, context: Context) -> items_pb2.IdOwner:
        self.seen.append((current_principal(), request_id_var.get()))
        self.remaining.append(context.time_remaining())
        if request.id in RAISES:
            raise RAISES[request.id](f"Failure number {request.id}.")
        if request.id == CRASH:
            raise RuntimeError("connection string postgresql://admin:hunter2@db")
        if request.id == HUGE:
            return items_pb2.IdOwner(owner="x" * HUGE_REPLY)
        if request.id == SLOW:
            await self.slow.forever()
        return items_pb2.IdOwner(owner="items")

    async def ReserveDocumentKeys(
        self, request: items_pb2.ReserveKeysRequest, context: Context
    ) -> items_pb2.DocumentKeys:
        return items_pb2.DocumentKeys(keys=[f"P-T-{n}" for n in range(request.count)])


#: The data chunks of every download: three bytes each.
DOWNLOAD = [bytes([n]) * 3 for n in range(5)]


@dataclass
class FakeFiles(attachments_pb2_grpc.FilesServicer):
    """Uploads and downloads, streamed; the attachment id asks for a failure (one of
    ``RAISES``, after the first chunk) or for a wait (``SLOW``, after the first chunk)."""

    seen: list[tuple[Principal | None, str]] = field(default_factory=list)
    received: list[bytes] = field(default_factory=list)
    slow: Waits = field(default_factory=Waits)

    async def CheckUpload(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        return core_pb2.Empty()

    async def Upload(
        self, request_iterator: AsyncIterator[attachments_pb2.UploadChunk], context: Context
    ) -> attachments_pb2.FileInfo:
        self.seen.append((current_principal(), request_id_var.get()))
        try:
            header = (await anext(request_iterator)).header
            if header.attachment in RAISES:
                raise RAISES[header.attachment](f"Failure number {header.attachment}.")
            async for chunk in request_iterator:
                self.received.append(chunk.data)
        except asyncio.CancelledError:
            self.slow.cancelled.set()
            raise
        size = sum(len(data) for data in self.received)
        return attachments_pb2.FileInfo(file_name=header.file_name, size=size)

    async def Download(
        self, request: attachments_pb2.DownloadRequest, context: Context
    ) -> AsyncIterator[attachments_pb2.DownloadChunk]:
        self.seen.append((current_principal(), request_id_var.get()))
        served = attachments_pb2.Served(start=0, end=sum(len(data) for data in DOWNLOAD))
        yield attachments_pb2.DownloadChunk(served=served)
        for n, data in enumerate(DOWNLOAD):
            if n == 1 and request.attachment in RAISES:
                raise RAISES[request.attachment](f"Failure number {request.attachment}.")
            if n == 1 and request.attachment == SLOW:
                await self.slow.forever()
            yield attachments_pb2.DownloadChunk(data=data)
