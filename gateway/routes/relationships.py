"""``/relationships`` and the up- and downstream views of an item."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plumbline.core.v1 import core_pb2
from plumbline.gateway import params, representations
from plumbline.gateway.bodies import RelationshipBody
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.routes.items import dates_with_time
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["relationships"])


def _input(body: RelationshipBody, rel_id: int = 0) -> items_pb2.RelationshipInput:
    message = items_pb2.RelationshipInput(id=rel_id, from_item=body.fromItem, to_item=body.toItem)
    if body.relationshipType is not None:
        message.relationship_type = body.relationshipType
    return message


@router.get("/relationships", summary="List a project's relationships")
async def list_relationships(
    request: Request, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "relationships")
    message = items_pb2.ListRelationshipsRequest(
        page=page.message(), omit_count=params.boolean(request, "omitCount")
    )
    message.project = params.integer(request, "project", required=True) or 0
    last_id = params.integer(request, "lastId")
    if last_id is not None:
        message.last_id = last_id
    reply = await gw.upstreams.items.relationships.ListRelationships(message)
    return await view.many(
        [representations.relationship(r) for r in reply.relationships], reply.page_info
    )


@router.post("/relationships", status_code=201, summary="Create a relationship")
async def create_relationship(
    request: Request, body: RelationshipBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "relationships")
    reply = await gw.upstreams.items.relationships.CreateRelationship(_input(body))
    return created(reply.id, view.location(f"relationships/{reply.id}"))


@router.get("/relationships/{relationshipId}", summary="Get a relationship")
async def get_relationship(
    request: Request, relationshipId: int, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "relationships")
    reply = await gw.upstreams.items.relationships.GetRelationships(
        core_pb2.IdList(ids=[relationshipId])
    )
    return await view.one(representations.relationship(reply.relationships[0]))


@router.put("/relationships/{relationshipId}", summary="Update a relationship")
async def update_relationship(
    relationshipId: int, body: RelationshipBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    await gw.upstreams.items.relationships.UpdateRelationship(_input(body, relationshipId))
    return updated()


@router.delete("/relationships/{relationshipId}", status_code=204, summary="Delete a relationship")
async def delete_relationship(
    relationshipId: int, version: Version, gw: Gw, _c: Caller
) -> Response:
    await gw.upstreams.items.relationships.DeleteRelationship(core_pb2.Id(id=relationshipId))
    return deleted()


@router.delete(
    "/relationships/{relationshipId}/suspect",
    status_code=204,
    summary="Clear a relationship's suspect flag",
)
async def clear_suspect(relationshipId: int, version: Version, gw: Gw, _c: Caller) -> Response:
    await gw.upstreams.items.relationships.ClearSuspect(core_pb2.Id(id=relationshipId))
    return deleted()


async def _item_relationships(
    request: Request, id: int, version: str, gw: Gw, page: Paging, upstream: bool
) -> Response:
    view = View(request, gw, version, "relationships")
    reply = await gw.upstreams.items.relationships.ListRelationships(
        items_pb2.ListRelationshipsRequest(item=id, upstream=upstream, page=page.message())
    )
    return await view.many(
        [representations.relationship(r) for r in reply.relationships], reply.page_info
    )


async def _related(
    request: Request, id: int, version: str, gw: Gw, page: Paging, upstream: bool
) -> Response:
    view = await View.of_items(request, gw, version)
    reply = await gw.upstreams.items.relationships.ListRelatedItems(
        items_pb2.ListRelationshipsRequest(
            item=id,
            upstream=upstream,
            page=page.message(),
            dates_with_time=dates_with_time(request),
        )
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


@router.get("/items/{id}/upstreamrelationships", summary="Relationships into an item")
async def upstream_relationships(
    request: Request, id: int, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    return await _item_relationships(request, id, version, gw, page, upstream=True)


@router.get("/items/{id}/downstreamrelationships", summary="Relationships out of an item")
async def downstream_relationships(
    request: Request, id: int, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    return await _item_relationships(request, id, version, gw, page, upstream=False)


@router.get("/items/{id}/upstreamrelated", summary="Items upstream of an item")
async def upstream_related(
    request: Request, id: int, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    return await _related(request, id, version, gw, page, upstream=True)


@router.get("/items/{id}/downstreamrelated", summary="Items downstream of an item")
async def downstream_related(
    request: Request, id: int, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    return await _related(request, id, version, gw, page, upstream=False)
