"""``/relationships`` and the up- and downstream views of an item."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import RelationshipBody
from plumbline.gateway.deps import Gw, Paging, Version, View, dates_with_time, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.routes.testrecords import (
    FAMILY_BASES,
    NOUNS,
    Kind,
    foreign_item,
    foreign_items,
)

router = APIRouter(prefix="/rest/{version}", tags=["relationships"])

Relationships = Annotated[View, Depends(view_of("relationships"))]
Items = Annotated[View, Depends(view_of("items"))]
AbstractItems = Annotated[View, Depends(view_of("abstractitems"))]
OmitCount = Annotated[
    bool,
    Depends(
        query.boolean(
            "omitCount",
            description="Do not count: totalResults then only tells whether another page follows.",
        )
    ),
]
LastId = Annotated[
    int | None,
    Depends(query.integer("lastId", description="Only relationships with a larger id.")),
]


async def _input(gw: Gw, body: RelationshipBody, rel_id: int = 0) -> items_pb2.RelationshipInput:
    """The relationship to write; an end that is a test plan or run is read from testmgmt
    first, and vouched for to the items service."""
    message = items_pb2.RelationshipInput(id=rel_id, from_item=body.fromItem, to_item=body.toItem)
    if body.relationshipType is not None:
        message.relationship_type = body.relationshipType
    ends = {"fromItem": body.fromItem, "toItem": body.toItem}
    message.foreign.extend(await foreign_items(gw, ends))
    return message


@router.get(
    "/relationships",
    summary="List a project's relationships",
    responses=schemas.page(records.Relationship),
)
async def list_relationships(
    view: Relationships,
    gw: Gw,
    page: Paging,
    project: query.RequiredProject,
    omit_count: OmitCount,
    last_id: LastId,
) -> Response:
    message = items_pb2.ListRelationshipsRequest(page=page.message(), omit_count=omit_count)
    message.project = project
    if last_id is not None:
        message.last_id = last_id
    reply = await gw.upstreams.items.relationships.ListRelationships(message)
    return await view.many(
        [representations.relationship(r) for r in reply.relationships], reply.page_info
    )


@router.post(
    "/relationships",
    status_code=201,
    summary="Create a relationship",
    responses=schemas.created(),
)
async def create_relationship(
    request: Request, body: RelationshipBody, version: Version, gw: Gw
) -> Response:
    view = View(request, gw, version, "relationships")
    reply = await gw.upstreams.items.relationships.CreateRelationship(await _input(gw, body))
    return created(reply.id, view.location(f"relationships/{reply.id}"))


@router.get(
    "/relationships/{relationshipId}",
    summary="Get a relationship",
    responses=schemas.one(records.Relationship),
)
async def get_relationship(relationshipId: int, view: Relationships, gw: Gw) -> Response:
    reply = await gw.upstreams.items.relationships.GetRelationships(
        core_pb2.IdList(ids=[relationshipId])
    )
    return await view.one(representations.relationship(reply.relationships[0]))


@router.put(
    "/relationships/{relationshipId}",
    summary="Update a relationship",
    responses=schemas.updated(),
)
async def update_relationship(relationshipId: int, body: RelationshipBody, gw: Gw) -> Response:
    await gw.upstreams.items.relationships.UpdateRelationship(
        await _input(gw, body, relationshipId)
    )
    return updated()


@router.delete(
    "/relationships/{relationshipId}",
    status_code=204,
    summary="Delete a relationship",
    responses=schemas.deleted(),
)
async def delete_relationship(relationshipId: int, gw: Gw) -> Response:
    await gw.upstreams.items.relationships.DeleteRelationship(core_pb2.Id(id=relationshipId))
    return deleted()


@router.delete(
    "/relationships/{relationshipId}/suspect",
    status_code=204,
    summary="Clear a relationship's suspect flag",
    responses=schemas.deleted(),
)
async def clear_suspect(relationshipId: int, gw: Gw) -> Response:
    await gw.upstreams.items.relationships.ClearSuspect(core_pb2.Id(id=relationshipId))
    return deleted()


Foreign = list[items_pb2.ForeignItem]


async def _item_relationships(
    id: int, view: View, gw: Gw, page: Paging, upstream: bool, foreign: Foreign | None = None
) -> Response:
    reply = await gw.upstreams.items.relationships.ListRelationships(
        items_pb2.ListRelationshipsRequest(
            item=id, upstream=upstream, page=page.message(), foreign=foreign or []
        )
    )
    return await view.many(
        [representations.relationship(r) for r in reply.relationships], reply.page_info
    )


async def _related(
    request: Request, id: int, view: View, gw: Gw, page: Paging, upstream: bool
) -> Response:
    reply = await gw.upstreams.items.relationships.ListRelatedItems(
        items_pb2.ListRelationshipsRequest(
            item=id,
            upstream=upstream,
            page=page.message(),
            dates_with_time=dates_with_time(request),
        )
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


@router.get(
    "/items/{id}/upstreamrelationships",
    summary="Relationships into an item",
    responses=schemas.page(records.Relationship),
)
async def upstream_relationships(id: int, view: Relationships, gw: Gw, page: Paging) -> Response:
    return await _item_relationships(id, view, gw, page, upstream=True)


@router.get(
    "/items/{id}/downstreamrelationships",
    summary="Relationships out of an item",
    responses=schemas.page(records.Relationship),
)
async def downstream_relationships(id: int, view: Relationships, gw: Gw, page: Paging) -> Response:
    return await _item_relationships(id, view, gw, page, upstream=False)


@router.get(
    "/items/{id}/upstreamrelated",
    summary="Items upstream of an item",
    responses=schemas.page(records.Item),
)
async def upstream_related(
    request: Request, id: int, view: Items, gw: Gw, page: Paging
) -> Response:
    return await _related(request, id, view, gw, page, upstream=True)


@router.get(
    "/items/{id}/downstreamrelated",
    summary="Items downstream of an item",
    responses=schemas.page(records.Item),
)
async def downstream_related(
    request: Request, id: int, view: Items, gw: Gw, page: Paging
) -> Response:
    return await _related(request, id, view, gw, page, upstream=False)


async def _related_records(
    request: Request, id: int, view: View, gw: Gw, page: Paging, upstream: bool, foreign: Foreign
) -> Response:
    """Up- or downstream of a test plan or run: items and test records, each read from its
    owner and shown with its own type."""
    with_time = dates_with_time(request)
    reply = await gw.upstreams.items.relationships.ListRelated(
        items_pb2.ListRelationshipsRequest(
            item=id, upstream=upstream, page=page.message(), foreign=foreign
        )
    )
    own = [r.id for r in reply.related if not r.foreign]
    others = [r.id for r in reply.related if r.foreign]
    found: dict[int, Mapping[str, Any]] = {}
    if own:
        items = await gw.upstreams.items.items.GetItems(
            items_pb2.GetItemsRequest(ids=own, dates_with_time=with_time)
        )
        found |= {i.id: representations.item(i) for i in items.items}
    if others:
        tests = await gw.upstreams.testmgmt.records.GetRecords(
            testmgmt_pb2.GetRecordsRequest(ids=others, dates_with_time=with_time, skip_missing=True)
        )
        found |= {r.id: representations.test_record(r) for r in tests.records}
    data = [found[r.id] for r in reply.related if r.id in found]
    return await view.many(data, reply.page_info)


def _record_routes(base: str, kind: Kind, upstream: bool) -> None:
    """The views of a test plan or run one way: related records may be items or test
    records."""
    noun = NOUNS[kind]
    way, where = ("upstream", "into") if upstream else ("downstream", "out of")

    @router.get(
        f"/{base}/{{id}}/{way}relationships",
        summary=f"Relationships {where} a {noun}",
        responses=schemas.page(records.Relationship),
    )
    async def record_relationships(id: int, view: Relationships, gw: Gw, page: Paging) -> Response:
        foreign = [await foreign_item(gw, id, kind)]
        return await _item_relationships(id, view, gw, page, upstream, foreign)

    @router.get(
        f"/{base}/{{id}}/{way}related",
        summary=f"Items and test records {way} of a {noun}",
        responses=schemas.page(records.AbstractItem),
    )
    async def record_related(
        request: Request, id: int, view: AbstractItems, gw: Gw, page: Paging
    ) -> Response:
        foreign = [await foreign_item(gw, id, kind)]
        return await _related_records(request, id, view, gw, page, upstream, foreign)


for _base, _kind in FAMILY_BASES:
    for _upstream in (True, False):
        _record_routes(_base, _kind, _upstream)
