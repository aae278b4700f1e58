"""Locks, tags, releases and comments."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.core.v1 import core_pb2
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import CommentBody, ItemTagBody, LockBody, ReleaseBody, TagBody
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.routes.items import dates_with_time
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["collaboration"])

Locks = Annotated[View, Depends(view_of("locks"))]
Tags = Annotated[View, Depends(view_of("tags"))]
Items = Annotated[View, Depends(view_of("items"))]
Releases = Annotated[View, Depends(view_of("releases"))]
Comments = Annotated[View, Depends(view_of("comments"))]
RootCommentsOnly = Annotated[
    bool,
    Depends(query.boolean("rootCommentsOnly", description="Only comments that reply to none.")),
]


# -- locks ---------------------------------------------------------------------------


@router.get("/items/{id}/lock", summary="Get an item's lock", responses=schemas.one(records.Lock))
async def get_lock(id: int, view: Locks, gw: Gw, _c: Caller) -> Response:
    reply = await gw.upstreams.items.items.GetItems(items_pb2.GetItemsRequest(ids=[id]))
    return await view.one(representations.lock(representations.item(reply.items[0])))


@router.put("/items/{id}/lock", summary="Lock or unlock an item", responses=schemas.updated())
async def put_lock(id: int, body: LockBody, version: Version, gw: Gw, _c: Caller) -> Response:
    await gw.upstreams.items.items.SetLock(items_pb2.SetLockRequest(item=id, locked=body.locked))
    return updated()


# -- tags ----------------------------------------------------------------------------


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


# -- releases ----------------------------------------------------------------------------


@router.get(
    "/releases", summary="List a project's releases", responses=schemas.page(records.Release)
)
async def list_releases(
    view: Releases, gw: Gw, page: Paging, _c: Caller, project: query.RequiredProject
) -> Response:
    reply = await gw.upstreams.items.releases.ListReleases(
        items_pb2.ListReleasesRequest(project=project, page=page.message())
    )
    return await view.many([representations.release(r) for r in reply.releases], reply.page_info)


@router.post("/releases", status_code=201, summary="Create a release", responses=schemas.created())
async def create_release(
    request: Request, body: ReleaseBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    if body.project is None or body.name is None:
        missing = [n for n, v in (("name", body.name), ("project", body.project)) if v is None]
        raise InvalidArgument(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required."
        )
    view = View(request, gw, version, "releases")
    message = items_pb2.ReleaseInput(
        name=body.name, description=body.description or "", project=body.project
    )
    if body.releaseDate:
        message.release_date = body.releaseDate
    reply = await gw.upstreams.items.releases.CreateRelease(message)
    return created(reply.id, view.location(f"releases/{reply.id}"))


@router.get(
    "/releases/{releaseId}", summary="Get a release", responses=schemas.one(records.Release)
)
async def get_release(releaseId: int, view: Releases, gw: Gw, _c: Caller) -> Response:
    reply = await gw.upstreams.items.releases.GetReleases(core_pb2.IdList(ids=[releaseId]))
    return await view.one(representations.release(reply.releases[0]))


@router.put("/releases/{releaseId}", summary="Update a release", responses=schemas.updated())
async def update_release(
    releaseId: int, body: ReleaseBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    values = body.model_dump(exclude_unset=True)
    message = items_pb2.ReleaseInput(id=releaseId)
    if values.get("name") is not None:
        message.name = values["name"]
    if "description" in values:
        message.description = values["description"] or ""
    if "releaseDate" in values:
        if values["releaseDate"]:
            message.release_date = values["releaseDate"]
        else:
            message.clear_release_date = True
    if values.get("project") is not None:
        message.project = values["project"]
    await gw.upstreams.items.releases.UpdateRelease(message)
    return updated()


# -- comments ------------------------------------------------------------------------------


async def _comment_page(
    view: View, gw: Gw, message: items_pb2.ListCommentsRequest, root_only: bool
) -> Response:
    message.root_only = root_only
    reply = await gw.upstreams.items.comments.ListComments(message)
    return await view.many([representations.comment(c) for c in reply.comments], reply.page_info)


@router.get("/comments", summary="List comments", responses=schemas.page(records.Comment))
async def list_comments(
    view: Comments, gw: Gw, page: Paging, _c: Caller, root_only: RootCommentsOnly
) -> Response:
    message = items_pb2.ListCommentsRequest(page=page.message())
    return await _comment_page(view, gw, message, root_only)


@router.post("/comments", status_code=201, summary="Create a comment", responses=schemas.created())
async def create_comment(
    request: Request, body: CommentBody, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "comments")
    message = items_pb2.CommentInput(
        text=body.body.text, comment_type=body.commentType or "GENERAL"
    )
    if body.inReplyTo is not None:
        message.in_reply_to = body.inReplyTo
    if body.location is not None:
        if body.location.item is not None:
            message.item = body.location.item
        if body.location.project is not None:
            message.project = body.location.project
    reply = await gw.upstreams.items.comments.CreateComment(message)
    return created(reply.id, view.location(f"comments/{reply.id}"))


@router.get("/comments/{id}", summary="Get a comment", responses=schemas.one(records.Comment))
async def get_comment(id: int, view: Comments, gw: Gw, _c: Caller) -> Response:
    reply = await gw.upstreams.items.comments.GetComments(core_pb2.IdList(ids=[id]))
    return await view.one(representations.comment(reply.comments[0]))


@router.get(
    "/comments/{id}/replies",
    summary="Replies to a comment",
    responses=schemas.page(records.Comment),
)
async def replies(
    id: int, view: Comments, gw: Gw, page: Paging, _c: Caller, root_only: RootCommentsOnly
) -> Response:
    message = items_pb2.ListCommentsRequest(in_reply_to=id, page=page.message())
    return await _comment_page(view, gw, message, root_only)


@router.get(
    "/items/{id}/comments", summary="An item's comments", responses=schemas.page(records.Comment)
)
async def item_comments(
    id: int, view: Comments, gw: Gw, page: Paging, _c: Caller, root_only: RootCommentsOnly
) -> Response:
    message = items_pb2.ListCommentsRequest(item=id, page=page.message())
    return await _comment_page(view, gw, message, root_only)
