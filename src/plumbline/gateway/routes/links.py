"""``/items/{id}/links``, ``/testplans/{id}/links``, ``/testruns/{id}/links``: URL links."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import LinkBody
from plumbline.gateway.deps import Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.routes.testrecords import FAMILY_BASES, NOUNS, Kind, foreign_item

router = APIRouter(prefix="/rest/{version}", tags=["links"])

Links = Annotated[View, Depends(view_of("links"))]


Foreign = list[items_pb2.ForeignItem]


async def _list(view: View, gw: Gw, page: Paging, id: int, foreign: Foreign) -> Response:
    reply = await gw.upstreams.items.links.ListLinks(
        items_pb2.ListLinksRequest(item=id, page=page.message(), foreign=foreign)
    )
    return await view.many([representations.link(link) for link in reply.links], reply.page_info)


async def _create(
    request: Request, version: str, gw: Gw, base: str, id: int, body: LinkBody, foreign: Foreign
) -> Response:
    view = View(request, gw, version, "links")
    reply = await gw.upstreams.items.links.CreateLink(
        items_pb2.LinkInput(
            item=id, url=body.url, description=body.description or "", foreign=foreign
        )
    )
    return created(reply.id, view.location(f"{base}/{id}/links/{reply.id}"))


async def _get(view: View, gw: Gw, id: int, link: int, foreign: Foreign) -> Response:
    reply = await gw.upstreams.items.links.ListLinks(
        items_pb2.ListLinksRequest(
            item=id, link=link, page=core_pb2.Page(start_at=0, max_results=1), foreign=foreign
        )
    )
    return await view.one(representations.link(reply.links[0]))


async def _update(gw: Gw, id: int, link: int, body: LinkBody, foreign: Foreign) -> Response:
    await gw.upstreams.items.links.UpdateLink(
        items_pb2.LinkInput(
            item=id,
            link=link,
            url=body.url,
            description=body.description or "",
            foreign=foreign,
        )
    )
    return updated()


async def _delete(gw: Gw, id: int, link: int, foreign: Foreign) -> Response:
    await gw.upstreams.items.links.DeleteLink(
        items_pb2.LinkInput(item=id, link=link, foreign=foreign)
    )
    return deleted()


@router.get("/items/{id}/links", summary="An item's links", responses=schemas.page(records.Link))
async def list_links(id: int, view: Links, gw: Gw, page: Paging) -> Response:
    return await _list(view, gw, page, id, [])


@router.post(
    "/items/{id}/links",
    status_code=201,
    summary="Add a link to an item",
    responses=schemas.created(),
)
async def create_link(
    request: Request, id: int, body: LinkBody, version: Version, gw: Gw
) -> Response:
    return await _create(request, version, gw, "items", id, body, [])


@router.get(
    "/items/{id}/links/{linkId}", summary="One link of an item", responses=schemas.one(records.Link)
)
async def get_link(id: int, linkId: int, view: Links, gw: Gw) -> Response:
    return await _get(view, gw, id, linkId, [])


@router.put(
    "/items/{id}/links/{linkId}", summary="Change a link of an item", responses=schemas.updated()
)
async def update_link(id: int, linkId: int, body: LinkBody, gw: Gw) -> Response:
    return await _update(gw, id, linkId, body, [])


@router.delete(
    "/items/{id}/links/{linkId}",
    status_code=204,
    summary="Remove a link from an item",
    responses=schemas.deleted(),
)
async def delete_link(id: int, linkId: int, gw: Gw) -> Response:
    return await _delete(gw, id, linkId, [])


def _record_routes(base: str, kind: Kind) -> None:
    """The same five for test plans or runs, whose links the items service keeps too."""
    noun = NOUNS[kind]

    async def vouched(gw: Gw, id: int) -> Foreign:
        return [await foreign_item(gw, id, kind)]

    @router.get(
        f"/{base}/{{id}}/links", summary=f"A {noun}'s links", responses=schemas.page(records.Link)
    )
    async def list_record_links(id: int, view: Links, gw: Gw, page: Paging) -> Response:
        return await _list(view, gw, page, id, await vouched(gw, id))

    @router.post(
        f"/{base}/{{id}}/links",
        status_code=201,
        summary=f"Add a link to a {noun}",
        responses=schemas.created(),
    )
    async def create_record_link(
        request: Request, id: int, body: LinkBody, version: Version, gw: Gw
    ) -> Response:
        return await _create(request, version, gw, base, id, body, await vouched(gw, id))

    @router.get(
        f"/{base}/{{id}}/links/{{linkId}}",
        summary=f"One link of a {noun}",
        responses=schemas.one(records.Link),
    )
    async def get_record_link(id: int, linkId: int, view: Links, gw: Gw) -> Response:
        return await _get(view, gw, id, linkId, await vouched(gw, id))

    @router.put(
        f"/{base}/{{id}}/links/{{linkId}}",
        summary=f"Change a link of a {noun}",
        responses=schemas.updated(),
    )
    async def update_record_link(id: int, linkId: int, body: LinkBody, gw: Gw) -> Response:
        return await _update(gw, id, linkId, body, await vouched(gw, id))

    @router.delete(
        f"/{base}/{{id}}/links/{{linkId}}",
        status_code=204,
        summary=f"Remove a link from a {noun}",
        responses=schemas.deleted(),
    )
    async def delete_record_link(id: int, linkId: int, gw: Gw) -> Response:
        return await _delete(gw, id, linkId, await vouched(gw, id))


for _base, _kind in FAMILY_BASES:
    _record_routes(_base, _kind)
