"""``/tags``: a project's tags and the items they tag."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import ItemTagBody, TagBody
from plumbline.gateway.deps import Gw, Paging, Version, View, dates_with_time, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.routes.testrecords import FAMILY_BASES, NOUNS, Kind, foreign_item

router = APIRouter(prefix="/rest/{version}", tags=["tags"])

Tags = Annotated[View, Depends(view_of("tags"))]


Items = Annotated[View, Depends(view_of("items"))]


async def _tag_page(view: View, gw: Gw, message: items_pb2.ListTagsRequest) -> Response:
    reply = await gw.upstreams.items.tags.ListTags(message)
    return await view.many([representations.tag(t) for t in reply.tags], reply.page_info)


@router.get("/tags", summary="List a project's tags", responses=schemas.page(records.Tag))
async def list_tags(view: Tags, gw: Gw, page: Paging, project: query.RequiredProject) -> Response:
    return await _tag_page(
        view, gw, items_pb2.ListTagsRequest(project=project, page=page.message())
    )


@router.get(
    "/projects/{projectId}/tags",
    summary="List a project's tags",
    responses=schemas.page(records.Tag),
)
async def project_tags(projectId: int, view: Tags, gw: Gw, page: Paging) -> Response:
    message = items_pb2.ListTagsRequest(project=projectId, page=page.message())
    return await _tag_page(view, gw, message)


@router.post("/tags", status_code=201, summary="Create a tag", responses=schemas.created())
async def create_tag(request: Request, body: TagBody, version: Version, gw: Gw) -> Response:
    if body.project is None:
        raise InvalidArgument("project is required.")
    view = View(request, gw, version, "tags")
    reply = await gw.upstreams.items.tags.CreateTag(
        items_pb2.TagInput(name=body.name, project=body.project)
    )
    return created(reply.id, view.location(f"tags/{reply.id}"))


@router.get("/tags/{id}", summary="Get a tag", responses=schemas.one(records.Tag))
async def get_tag(id: int, view: Tags, gw: Gw) -> Response:
    reply = await gw.upstreams.items.tags.GetTags(core_pb2.IdList(ids=[id]))
    return await view.one(representations.tag(reply.tags[0]))


@router.put("/tags/{id}", summary="Rename a tag", responses=schemas.updated())
async def update_tag(id: int, body: TagBody, gw: Gw) -> Response:
    await gw.upstreams.items.tags.UpdateTag(items_pb2.TagInput(id=id, name=body.name))
    return updated()


@router.delete("/tags/{id}", status_code=204, summary="Delete a tag", responses=schemas.deleted())
async def delete_tag(id: int, gw: Gw) -> Response:
    await gw.upstreams.items.tags.DeleteTag(core_pb2.Id(id=id))
    return deleted()


@router.get("/tags/{id}/items", summary="Items with a tag", responses=schemas.page(records.Item))
async def tagged_items(request: Request, id: int, view: Items, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.tags.ListTaggedItems(
        items_pb2.ListTaggedItemsRequest(
            tag=id, page=page.message(), dates_with_time=dates_with_time(request)
        )
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


Foreign = list[items_pb2.ForeignItem]


async def _tags_of(view: View, gw: Gw, page: Paging, id: int, foreign: Foreign) -> Response:
    message = items_pb2.ListTagsRequest(item=id, page=page.message(), foreign=foreign)
    return await _tag_page(view, gw, message)


async def _add(
    request: Request, version: str, gw: Gw, base: str, id: int, tag: int, foreign: Foreign
) -> Response:
    view = View(request, gw, version, "tags")
    await gw.upstreams.items.tags.TagItem(items_pb2.ItemTag(item=id, tag=tag, foreign=foreign))
    return created(tag, view.location(f"{base}/{id}/tags/{tag}"))


async def _one(view: View, gw: Gw, noun: str, id: int, tag: int, foreign: Foreign) -> Response:
    reply = await gw.upstreams.items.tags.ListTags(
        items_pb2.ListTagsRequest(
            item=id, page=core_pb2.Page(start_at=0, max_results=1000), foreign=foreign
        )
    )
    found = next((t for t in reply.tags if t.id == tag), None)
    if found is None:
        raise NotFound(f"{noun.capitalize()} {id} does not have tag {tag}.")
    return await view.one(representations.tag(found))


async def _remove(gw: Gw, id: int, tag: int, foreign: Foreign) -> Response:
    await gw.upstreams.items.tags.UntagItem(items_pb2.ItemTag(item=id, tag=tag, foreign=foreign))
    return deleted()


@router.get("/items/{id}/tags", summary="An item's tags", responses=schemas.page(records.Tag))
async def item_tags(id: int, view: Tags, gw: Gw, page: Paging) -> Response:
    return await _tags_of(view, gw, page, id, [])


@router.post(
    "/items/{id}/tags", status_code=201, summary="Tag an item", responses=schemas.created()
)
async def tag_item(
    request: Request, id: int, body: ItemTagBody, version: Version, gw: Gw
) -> Response:
    return await _add(request, version, gw, "items", id, body.tag, [])


@router.get(
    "/items/{id}/tags/{tagId}", summary="One tag of an item", responses=schemas.one(records.Tag)
)
async def item_tag(id: int, tagId: int, view: Tags, gw: Gw) -> Response:
    return await _one(view, gw, "item", id, tagId, [])


@router.delete(
    "/items/{id}/tags/{tagId}",
    status_code=204,
    summary="Remove a tag from an item",
    responses=schemas.deleted(),
)
async def untag_item(id: int, tagId: int, gw: Gw) -> Response:
    return await _remove(gw, id, tagId, [])


def _record_routes(base: str, kind: Kind) -> None:
    """The same four for test plans or runs, which the items service tags as well."""
    noun = NOUNS[kind]

    @router.get(
        f"/{base}/{{id}}/tags", summary=f"A {noun}'s tags", responses=schemas.page(records.Tag)
    )
    async def record_tags(id: int, view: Tags, gw: Gw, page: Paging) -> Response:
        return await _tags_of(view, gw, page, id, [await foreign_item(gw, id, kind)])

    @router.post(
        f"/{base}/{{id}}/tags",
        status_code=201,
        summary=f"Tag a {noun}",
        responses=schemas.created(),
    )
    async def tag_record(
        request: Request, id: int, body: ItemTagBody, version: Version, gw: Gw
    ) -> Response:
        foreign = [await foreign_item(gw, id, kind)]
        return await _add(request, version, gw, base, id, body.tag, foreign)

    @router.get(
        f"/{base}/{{id}}/tags/{{tagId}}",
        summary=f"One tag of a {noun}",
        responses=schemas.one(records.Tag),
    )
    async def record_tag(id: int, tagId: int, view: Tags, gw: Gw) -> Response:
        return await _one(view, gw, noun, id, tagId, [await foreign_item(gw, id, kind)])

    @router.delete(
        f"/{base}/{{id}}/tags/{{tagId}}",
        status_code=204,
        summary=f"Remove a tag from a {noun}",
        responses=schemas.deleted(),
    )
    async def untag_record(id: int, tagId: int, gw: Gw) -> Response:
        return await _remove(gw, id, tagId, [await foreign_item(gw, id, kind)])


for _base, _kind in FAMILY_BASES:
    _record_routes(_base, _kind)
