"""Comments on items and projects, with replies."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, and_, func, select

from plumbline.common.access import Access, AccessCache, Action, read_by_ids, readable_where
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, first_or_missing, insert_id
from plumbline.common.errors import InvalidArgument
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.items.foreign import NONE, Foreign, Subject, subject
from plumbline.services.items.idspace import owner_in
from plumbline.services.items.models import comments, projects

COMMENT_TYPES = (
    "GENERAL",
    "QUESTION",
    "PROPOSED_CHANGE",
    "ACCEPTED_COMMENT",
    "REJECTED_COMMENT",
    "ISSUE",
    "DECISION",
    "DECISION_REQUEST",
)


class Comments:
    """Comment rules and storage.

    A comment belongs to its location's project (the item's, or the project commented
    on). Reading one needs READ there; writing one (a new comment or a reply) needs WRITE,
    the READ_WRITE role: a comment is a change to the project's record.
    """

    def __init__(self, db: Database, outbox: Outbox, access: AccessCache) -> None:
        self.db = db
        self.outbox = outbox
        self.access = access

    async def page(
        self,
        item: int | None,
        in_reply_to: int | None,
        root_only: bool,
        start_at: int,
        max_results: int,
        foreign: Foreign = NONE,
    ) -> tuple[list[Row[Any]], int]:
        """All comments the caller may read, an (abstract) item's, or a comment's replies,
        oldest first."""
        access = await self.access.current()
        conditions: list[Any] = [
            comments.c.deleted.is_(False),
            readable_where(access, comments.c.project),
        ]
        async with self.db.read() as session:
            if item is not None:
                await subject(session, item, foreign, access)
                conditions.append(comments.c.item == item)
            if in_reply_to is not None:
                await self._one(session, in_reply_to, access)
                conditions.append(comments.c.in_reply_to == in_reply_to)
            if root_only:
                conditions.append(comments.c.in_reply_to.is_(None))
            where = and_(*conditions)
            total = await session.scalar(select(func.count()).select_from(comments).where(where))
            rows = (
                await session.execute(
                    select(comments)
                    .where(where)
                    .order_by(comments.c.id)
                    .offset(start_at)
                    .limit(max_results)
                )
            ).all()
        return list(rows), int(total or 0)

    async def _one(self, session: Any, comment_id: int, access: Access) -> Any:
        row = await first_or_missing(
            session,
            select(comments).where(comments.c.id == comment_id, comments.c.deleted.is_(False)),
            f"No comment with id {comment_id}.",
        )
        access.require(Action.READ, row.project, f"comment {comment_id}")
        return row

    async def get_many(self, ids: list[int]) -> list[Row[Any]]:
        """Comments the caller may read, by id; a single unknown id is NotFound."""
        query = (
            select(comments)
            .where(comments.c.id.in_(ids), comments.c.deleted.is_(False))
            .order_by(comments.c.id)
        )
        return await read_by_ids(self.db, await self.access.current(), query, ids, "comment")

    async def create(
        self,
        text: str,
        comment_type: str,
        item: int | None,
        project: int | None,
        in_reply_to: int | None,
        foreign: Foreign = NONE,
    ) -> int:
        """``POST /comments``: on an (abstract) item, on a project, or in reply to a
        comment."""
        access = await self.access.current()
        caller = access.principal
        if not text.strip():
            raise InvalidArgument("body.text must not be empty.")
        comment_type = comment_type or "GENERAL"
        if comment_type not in COMMENT_TYPES:
            raise InvalidArgument(
                f"commentType must be one of {', '.join(COMMENT_TYPES)}, got {comment_type!r}."
            )
        async with self.outbox.transaction() as session:
            if in_reply_to is not None:
                parent = (
                    await session.execute(
                        select(comments).where(
                            comments.c.id == in_reply_to, comments.c.deleted.is_(False)
                        )
                    )
                ).first()
                if parent is None:
                    raise InvalidArgument(f"inReplyTo: no comment with id {in_reply_to}.")
                access.require(Action.READ, parent.project, f"comment {in_reply_to}")
                if item is None and parent.item is not None:
                    item = parent.item
                    if await owner_in(session, item) != "items":
                        # Vouched for when the comment replied to was made.
                        foreign = {
                            **foreign,
                            item: Subject(item, parent.project, "abstract item", True),
                        }
                project = parent.project if project is None else project
            where = f"project {project}"
            if item is not None:
                row = await subject(session, item, foreign, member="location.item")
                if project is not None and project != row.project:
                    raise InvalidArgument(
                        f"location.project does not match the {row.noun}'s project."
                    )
                project, where = row.project, str(row)
            elif project is not None:
                if (
                    await session.scalar(select(projects.c.id).where(projects.c.id == project))
                    is None
                ):
                    raise InvalidArgument(f"location.project: no project with id {project}.")
            else:
                raise InvalidArgument("location needs an item or a project (or inReplyTo).")
            access.require(Action.WRITE, project, f"the comments of {where}")
            comment_id = await insert_id(
                session,
                comments.insert().values(
                    project=project,
                    item=item,
                    in_reply_to=in_reply_to,
                    text=text,
                    comment_type=comment_type,
                    status="OPEN",
                    deleted=False,
                    created_by=caller.user_id,
                    modified_by=caller.user_id,
                    created_at=utcnow(),
                ),
            )
            await self.outbox.add(
                session,
                Event(
                    "items.comment.created",
                    actor=caller.user_id,
                    project=project,
                    object_ids=[comment_id] + ([item] if item else []),
                    payload={"name": text[:80], "item": item, "comment": text[:1000]},
                ),
            )
        return comment_id
