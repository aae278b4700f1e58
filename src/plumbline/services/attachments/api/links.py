"""``plumbline.attachments.v1.AttachmentLinks``: attachments on items, test plans and runs."""

from __future__ import annotations

from plumbline.api.attachments.v1 import attachments_pb2 as pb
from plumbline.api.attachments.v1 import attachments_pb2_grpc
from plumbline.api.core.v1 import core_pb2
from plumbline.common.rpc import Context, page_info, page_of
from plumbline.services.attachments.api.messages import AttachmentMessages
from plumbline.services.attachments.links import Links, Owner


def _owner(message: pb.Owner) -> Owner:
    return Owner(message.id, message.project, message.noun or "item")


class AttachmentLinksServicer(attachments_pb2_grpc.AttachmentLinksServicer):
    """Thin mapping onto ``Links``."""

    def __init__(self, links: Links, render: AttachmentMessages) -> None:
        self.links = links
        self.render = render

    async def ListLinked(
        self, request: pb.ListLinkedRequest, context: Context
    ) -> pb.AttachmentPage:
        start, size = page_of(request.page)
        rows, total = await self.links.page(_owner(request.owner), start, size)
        return await self.render.page(rows, start, total, request.dates_with_time)

    async def ListProjectLinks(
        self, request: pb.ListProjectLinksRequest, context: Context
    ) -> pb.ProjectLinkPage:
        start, size = page_of(request.page)
        rows, total = await self.links.project_page(request.project, start, size)
        listed = await self.render.many(rows, request.dates_with_time)
        return pb.ProjectLinkPage(
            links=[
                pb.ProjectLink(owner=row.link_owner, attachment=attachment)
                for row, attachment in zip(rows, listed, strict=True)
            ],
            page_info=page_info(start, len(rows), total),
        )

    async def Link(self, request: pb.LinkRequest, context: Context) -> core_pb2.Empty:
        await self.links.link(_owner(request.owner), request.attachment)
        return core_pb2.Empty()

    async def Unlink(self, request: pb.LinkRequest, context: Context) -> core_pb2.Empty:
        await self.links.unlink(_owner(request.owner), request.attachment)
        return core_pb2.Empty()

    async def CopyLinks(self, request: pb.CopyLinksRequest, context: Context) -> core_pb2.Empty:
        await self.links.copy(_owner(request.source), _owner(request.target))
        return core_pb2.Empty()
