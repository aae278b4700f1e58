"""``/comments``: comments on items and projects, and replies."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import CommentBody
from plumbline.gateway.deps import Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created
from plumbline.gateway.routes.attachments import vouched_attachment
from plumbline.gateway.routes.testrecords import (
    FAMILY_BASES,
    NOUNS,
    Kind,
    foreign_item,
    foreign_items,
)

router = APIRouter(prefix="/rest/{version}", tags=["comments"])

Comments = Annotated[View, Depends(view_of("comments"))]


RootCommentsOnly = Annotated[
    bool,
    Depends(query.boolean("rootCommentsOnly", description="Only comments that reply to none.")),
]


async def _comment_page(
    view: View, gw: Gw, message: items_pb2.ListCommentsRequest, root_only: bool
) -> Response:
    message.root_only = root_only
    reply = await gw.upstreams.items.comments.ListComments(message)
    return await view.many([representations.comment(c) for c in reply.comments], reply.page_info)


@router.get("/comments", summary="List comments", responses=schemas.page(records.Comment))
async def list_comments(
    view: Comments, gw: Gw, page: Paging, root_only: RootCommentsOnly
) -> Response:
    message = items_pb2.ListCommentsRequest(page=page.message())
    return await _comment_page(view, gw, message, root_only)


@router.post("/comments", status_code=201, summary="Create a comment", responses=schemas.created())
async def create_comment(request: Request, body: CommentBody, version: Version, gw: Gw) -> Response:
    view = View(request, gw, version, "comments")
    message = items_pb2.CommentInput(
        text=body.body.text, comment_type=body.commentType or "GENERAL"
    )
    if body.inReplyTo is not None:
        message.in_reply_to = body.inReplyTo
    if body.location is not None:
        if body.location.item is not None:
            message.item = body.location.item
            # A comment on a test plan or run: the items service keeps it, testmgmt vouches.
            message.foreign.extend(await foreign_items(gw, {"location.item": message.item}))
        if body.location.project is not None:
            message.project = body.location.project
    reply = await gw.upstreams.items.comments.CreateComment(message)
    return created(reply.id, view.location(f"comments/{reply.id}"))


@router.get("/comments/{id}", summary="Get a comment", responses=schemas.one(records.Comment))
async def get_comment(id: int, view: Comments, gw: Gw) -> Response:
    reply = await gw.upstreams.items.comments.GetComments(core_pb2.IdList(ids=[id]))
    return await view.one(representations.comment(reply.comments[0]))


@router.get(
    "/comments/{id}/replies",
    summary="Replies to a comment",
    responses=schemas.page(records.Comment),
)
async def replies(
    id: int, view: Comments, gw: Gw, page: Paging, root_only: RootCommentsOnly
) -> Response:
    message = items_pb2.ListCommentsRequest(in_reply_to=id, page=page.message())
    return await _comment_page(view, gw, message, root_only)


@router.get(
    "/items/{id}/comments", summary="An item's comments", responses=schemas.page(records.Comment)
)
async def item_comments(
    id: int, view: Comments, gw: Gw, page: Paging, root_only: RootCommentsOnly
) -> Response:
    message = items_pb2.ListCommentsRequest(item=id, page=page.message())
    return await _comment_page(view, gw, message, root_only)


def _record_routes(base: str, kind: Kind) -> None:
    """A test plan's or run's comments (made with ``POST /comments``)."""

    @router.get(
        f"/{base}/{{id}}/comments",
        summary=f"A {NOUNS[kind]}'s comments",
        responses=schemas.page(records.Comment),
    )
    async def record_comments(
        id: int, view: Comments, gw: Gw, page: Paging, root_only: RootCommentsOnly
    ) -> Response:
        foreign = [await foreign_item(gw, id, kind)]
        message = items_pb2.ListCommentsRequest(item=id, page=page.message(), foreign=foreign)
        return await _comment_page(view, gw, message, root_only)


for _base, _kind in FAMILY_BASES:
    _record_routes(_base, _kind)


@router.get(
    "/attachments/{attachmentId}/comments",
    summary="An attachment's comments",
    responses=schemas.page(records.Comment),
)
async def attachment_comments(
    attachmentId: int, view: Comments, gw: Gw, page: Paging, root_only: RootCommentsOnly
) -> Response:
    foreign = [await vouched_attachment(gw, attachmentId)]
    message = items_pb2.ListCommentsRequest(item=attachmentId, page=page.message(), foreign=foreign)
    return await _comment_page(view, gw, message, root_only)
