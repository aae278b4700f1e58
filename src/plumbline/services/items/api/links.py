"""``plumbline.items.v1.Links``: URL links of items."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context, optional, page_info, page_of
from plumbline.services.items.foreign import vouched
from plumbline.services.items.links import Links


class LinksServicer(items_pb2_grpc.LinksServicer):
    """Thin mapping onto ``Links``."""

    def __init__(self, links: Links) -> None:
        self.links = links

    async def ListLinks(self, request: pb.ListLinksRequest, context: Context) -> pb.LinkPage:
        start, size = page_of(request.page)
        link = optional(request, "link")
        rows, total = await self.links.page(
            request.item, link, start, size, vouched(request.foreign)
        )
        return pb.LinkPage(
            links=[
                pb.Link(id=r.id, item=r.item, url=r.url, description=r.description) for r in rows
            ],
            page_info=page_info(start, len(rows), total),
        )

    async def CreateLink(self, request: pb.LinkInput, context: Context) -> core_pb2.Created:
        return core_pb2.Created(
            id=await self.links.create(
                request.item, request.url, request.description, vouched(request.foreign)
            )
        )

    async def UpdateLink(self, request: pb.LinkInput, context: Context) -> core_pb2.Empty:
        await self.links.update(
            request.item,
            request.link,
            request.url,
            request.description,
            vouched(request.foreign),
        )
        return core_pb2.Empty()

    async def DeleteLink(self, request: pb.LinkInput, context: Context) -> core_pb2.Empty:
        await self.links.delete(request.item, request.link, vouched(request.foreign))
        return core_pb2.Empty()
