"""``plumbline.items.v1.Comments``."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.dates import format_datetime
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.items.comments import Comments
from plumbline.services.items.foreign import vouched


def comment_message(row: Any) -> pb.Comment:
    """A comments row as a message."""
    return message_of(row, pb.Comment, created_date=format_datetime(row.created_at))


class CommentsServicer(items_pb2_grpc.CommentsServicer):
    """Thin mapping onto ``Comments``."""

    def __init__(self, comments: Comments) -> None:
        self.comments = comments

    async def ListComments(
        self, request: pb.ListCommentsRequest, context: Context
    ) -> pb.CommentPage:
        start, size = page_of(request.page)
        rows, total = await self.comments.page(
            optional(request, "item"),
            optional(request, "in_reply_to"),
            request.root_only,
            start,
            size,
            vouched(request.foreign),
        )
        return pb.CommentPage(
            comments=[comment_message(r) for r in rows],
            page_info=page_info(start, len(rows), total),
        )

    async def GetComments(self, request: core_pb2.IdList, context: Context) -> pb.CommentList:
        rows = await self.comments.get_many(list(request.ids))
        return pb.CommentList(comments=[comment_message(r) for r in rows])

    async def CreateComment(self, request: pb.CommentInput, context: Context) -> core_pb2.Created:
        new_id = await self.comments.create(
            request.text,
            request.comment_type,
            optional(request, "item"),
            optional(request, "project"),
            optional(request, "in_reply_to"),
            vouched(request.foreign),
        )
        return core_pb2.Created(id=new_id)
