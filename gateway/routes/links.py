"""``/items/{id}/links``: URL links of items."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.core.v1 import core_pb2
from plumbline.gateway import records, schemas
from plumbline.gateway.bodies import LinkBody
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["links"])

Links = Annotated[View, Depends(view_of("links"))]


def _link(message: items_pb2.Link) -> records.Link:
    return {
        "id": message.id,
        "item": message.item,
        "url": message.url,
        "description": message.description,
        "type": "links",
    }


@router.get("/items/{id}/links", summary="An item's links", responses=schemas.page(records.Link))
async def list_links(id: int, view: Links, gw: Gw, page: Paging, _c: Caller) -> Response:
    reply = await gw.upstreams.items.links.ListLinks(
        items_pb2.ListLinksRequest(item=id, page=page.message())
    )
    return await view.many([_link(link) for link in reply.links], reply.page_info)


@router.post(
    "/items/{id}/links",
    status_code=201,
    summary="Add a link to an item",
    responses=schemas.created(),
)
async def create_link(
    request: Request, id: int, body: LinkBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "links")
    reply = await gw.upstreams.items.links.CreateLink(
        items_pb2.LinkInput(item=id, url=body.url, description=body.description or "")
    )
    return created(reply.id, view.location(f"items/{id}/links/{reply.id}"))


@router.get(
    "/items/{id}/links/{linkId}", summary="One link of an item", responses=schemas.one(records.Link)
)
async def get_link(id: int, linkId: int, view: Links, gw: Gw, _c: Caller) -> Response:
    reply = await gw.upstreams.items.links.ListLinks(
        items_pb2.ListLinksRequest(
            item=id, link=linkId, page=core_pb2.Page(start_at=0, max_results=1)
        )
    )
    return await view.one(_link(reply.links[0]))


@router.put(
    "/items/{id}/links/{linkId}", summary="Change a link of an item", responses=schemas.updated()
)
async def update_link(
    id: int, linkId: int, body: LinkBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    await gw.upstreams.items.links.UpdateLink(
        items_pb2.LinkInput(item=id, link=linkId, url=body.url, description=body.description or "")
    )
    return updated()


@router.delete(
    "/items/{id}/links/{linkId}",
    status_code=204,
    summary="Remove a link from an item",
    responses=schemas.deleted(),
)
async def delete_link(id: int, linkId: int, version: Version, gw: Gw, _c: Caller) -> Response:
    await gw.upstreams.items.links.DeleteLink(items_pb2.LinkInput(item=id, link=linkId))
    return deleted()
