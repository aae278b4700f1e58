"""``/tags``: a project's tags and the items they tag."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.core.v1 import core_pb2
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import ItemTagBody, TagBody
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View, dates_with_time, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["tags"])

Tags = Annotated[View, Depends(view_of("tags"))]


Items = Annotated[View, Depends(view_of("items"))]


async def _tag_page(view: View, gw: Gw, message: items_pb2.ListTagsRequest) -> Response:
    reply = await gw.upstreams.items.tags.ListTags(message)
    return await view.many([representations.tag(t) for t in reply.tags], reply.page_info)


@router.get("/tags", summary="List a project's tags", responses=schemas.page(records.Tag))
async def list_tags(
    view: Tags, gw: Gw, page: Paging, _c: Caller, project: query.RequiredProject
) -> Response:
    return await _tag_page(
        view, gw, items_pb2.ListTagsRequest(project=project, page=page.message())
    )


@router.get(
    "/projects/{projectId}/tags",
    summary="List a project's tags",
    responses=schemas.page(records.Tag),
)
async def project_tags(projectId: int, view: Tags, gw: Gw, page: Paging, _c: Caller) -> Response:
    message = items_pb2.ListTagsRequest(project=projectId, page=page.message())
    return await _tag_page(view, gw, message)


@router.post("/tags", status_code=201, summary="Create a tag", responses=schemas.created())
async def create_tag(
    request: Request, body: TagBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    if body.project is None:
        raise InvalidArgument("project is required.")
    view = View(request, gw, version, "tags")
    reply = await gw.upstreams.items.tags.CreateTag(
        items_pb2.TagInput(name=body.name, project=body.project)
    )
    return created(reply.id, view.location(f"tags/{reply.id}"))


@router.get("/tags/{id}", summary="Get a tag", responses=schemas.one(records.Tag))
async def get_tag(id: int, view: Tags, gw: Gw, _c: Caller) -> Response:
    reply = await gw.upstreams.items.tags.GetTags(core_pb2.IdList(ids=[id]))
    return await view.one(representations.tag(reply.tags[0]))


@router.put("/tags/{id}", summary="Rename a tag", responses=schemas.updated())
async def update_tag(id: int, body: TagBody, version: Version, gw: Gw, _c: Caller) -> Response:
    await gw.upstreams.items.tags.UpdateTag(items_pb2.TagInput(id=id, name=body.name))
    return updated()


@router.delete("/tags/{id}", status_code=204, summary="Delete a tag", responses=schemas.deleted())
async def delete_tag(id: int, version: Version, gw: Gw, _c: Caller) -> Response:
    await gw.upstreams.items.tags.DeleteTag(core_pb2.Id(id=id))
    return deleted()


@router.get("/tags/{id}/items", summary="Items with a tag", responses=schemas.page(records.Item))
async def tagged_items(
    request: Request, id: int, view: Items, gw: Gw, page: Paging, _c: Caller
) -> Response:
    reply = await gw.upstreams.items.tags.ListTaggedItems(
        items_pb2.ListTaggedItemsRequest(
            tag=id, page=page.message(), dates_with_time=dates_with_time(request)
        )
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


@router.get("/items/{id}/tags", summary="An item's tags", responses=schemas.page(records.Tag))
async def item_tags(id: int, view: Tags, gw: Gw, page: Paging, _c: Caller) -> Response:
    return await _tag_page(view, gw, items_pb2.ListTagsRequest(item=id, page=page.message()))


@router.post(
    "/items/{id}/tags", status_code=201, summary="Tag an item", responses=schemas.created()
)
async def tag_item(
    request: Request, id: int, body: ItemTagBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "tags")
    await gw.upstreams.items.tags.TagItem(items_pb2.ItemTag(item=id, tag=body.tag))
    return created(body.tag, view.location(f"items/{id}/tags/{body.tag}"))


@router.get(
    "/items/{id}/tags/{tagId}", summary="One tag of an item", responses=schemas.one(records.Tag)
)
async def item_tag(id: int, tagId: int, view: Tags, gw: Gw, _c: Caller) -> Response:
    reply = await gw.upstreams.items.tags.ListTags(
        items_pb2.ListTagsRequest(item=id, page=core_pb2.Page(start_at=0, max_results=1000))
    )
    found = next((t for t in reply.tags if t.id == tagId), None)
    if found is None:
        raise NotFound(f"Item {id} does not have tag {tagId}.")
    return await view.one(representations.tag(found))


@router.delete(
    "/items/{id}/tags/{tagId}",
    status_code=204,
    summary="Remove a tag from an item",
    responses=schemas.deleted(),
)
async def untag_item(id: int, tagId: int, version: Version, gw: Gw, _c: Caller) -> Response:
    await gw.upstreams.items.tags.UntagItem(items_pb2.ItemTag(item=id, tag=tagId))
    return deleted()
