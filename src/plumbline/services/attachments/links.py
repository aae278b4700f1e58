"""Which attachments hang on which items, test plans and test runs.

The owner of an attachment's place (an item, test plan or test run) is another service's
record, vouched for by the gateway: it reads the record from its owner first, which
answers 404 or refuses (401) as the caller's access demands, and passes its id and project
(``Owner``). This service trusts that project, as services trust the gateway, and checks
the caller's role there with its own access cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, delete, select
from sqlalchemy.exc import IntegrityError

from plumbline.common.access import Action, readable_where
from plumbline.common.dates import utcnow
from plumbline.common.db import affected, unique_violation
from plumbline.common.errors import AlreadyExists, InvalidArgument, NotFound
from plumbline.common.recordsearch import page
from plumbline.services.attachments.models import attachment_links, attachments
from plumbline.services.attachments.records import Domain, event, load


@dataclass(frozen=True)
class Owner:
    """An item, test plan or test run, as the gateway vouches for it."""

    id: int
    project: int
    noun: str = "item"

    def __str__(self) -> str:
        return f"{self.noun} {self.id}"


class Links(Domain):
    """Attach, detach, list, copy; and forget the owners that are deleted."""

    async def page(self, owner: Owner, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """``GET /items/{id}/attachments``: the readable attachments on ``owner``, in the
        order they were attached."""
        access = await self.access.current()
        access.require(Action.READ, owner.project, str(owner))
        joined = attachments.join(
            attachment_links, attachment_links.c.attachment == attachments.c.id
        )
        where = [
            attachment_links.c.owner == owner.id,
            readable_where(access, attachments.c.project),
        ]
        order = [attachment_links.c.created_at, attachments.c.id]
        async with self.db.read() as session:
            return await page(session, joined, where, order, start, size, select(attachments))

    async def project_page(self, project: int, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """``GET /labs/projects/{id}/attachmentlinks``: the project's links to readable
        attachments, owner by owner, each owner's in the order they were attached; each
        row an attachment with its ``link_owner``."""
        access = await self.access.current()
        access.require(Action.READ, project, f"project {project}")
        joined = attachments.join(
            attachment_links, attachment_links.c.attachment == attachments.c.id
        )
        where = [
            attachment_links.c.owner_project == project,
            readable_where(access, attachments.c.project),
        ]
        order = [attachment_links.c.owner, attachment_links.c.created_at, attachments.c.id]
        columns = select(attachments, attachment_links.c.owner.label("link_owner"))
        async with self.db.read() as session:
            return await page(session, joined, where, order, start, size, columns)

    async def link(self, owner: Owner, attachment_id: int) -> None:
        """``POST /items/{id}/attachments``: an attachment of the owner's project."""
        access = await self.access.current()
        access.require(Action.WRITE, owner.project, str(owner))
        caller = access.principal
        async with self.outbox.transaction() as session:
            try:
                row = await load(session, attachment_id, access)
            except NotFound:
                raise InvalidArgument(
                    f"attachment: no attachment with id {attachment_id}."
                ) from None
            if row.project != owner.project:
                raise InvalidArgument(
                    f"attachment: attachment {attachment_id} belongs to project {row.project}; "
                    f"{owner} can only have attachments of its own project, {owner.project}."
                )
            try:
                async with session.begin_nested():
                    await session.execute(
                        attachment_links.insert().values(
                            owner=owner.id,
                            attachment=attachment_id,
                            owner_project=owner.project,
                            created_at=utcnow(),
                        )
                    )
            except IntegrityError as exc:
                if not unique_violation(exc):
                    raise
                raise AlreadyExists(
                    f"Attachment {attachment_id} is already attached to {owner}."
                ) from None
            await self.outbox.add(
                session, event("linked", row, caller, int(row.version), owner=owner.id)
            )

    async def unlink(self, owner: Owner, attachment_id: int) -> None:
        """``DELETE /items/{id}/attachments/{attachmentId}``: the attachment stays."""
        access = await self.access.current()
        access.require(Action.WRITE, owner.project, str(owner))
        async with self.outbox.transaction() as session:
            gone = await affected(
                session,
                delete(attachment_links).where(
                    attachment_links.c.owner == owner.id,
                    attachment_links.c.attachment == attachment_id,
                ),
            )
            if not gone:
                raise NotFound(f"Attachment {attachment_id} is not attached to {owner}.")
            row = await load(session, attachment_id, access)
            await self.outbox.add(
                session,
                event("unlinked", row, access.principal, int(row.version), owner=owner.id),
            )

    async def copy(self, source: Owner, target: Owner) -> None:
        """The attachments of ``source`` attached to ``target`` as well (a duplicate)."""
        access = await self.access.current()
        access.require(Action.READ, source.project, str(source))
        access.require(Action.WRITE, target.project, str(target))
        now = utcnow()
        async with self.outbox.transaction() as session:
            rows = (
                await session.execute(
                    select(attachments)
                    .join(attachment_links, attachment_links.c.attachment == attachments.c.id)
                    .where(
                        attachment_links.c.owner == source.id,
                        attachments.c.project == target.project,
                    )
                    .order_by(attachment_links.c.created_at, attachments.c.id)
                )
            ).all()
            for row in rows:
                await session.execute(
                    attachment_links.insert().values(
                        owner=target.id,
                        attachment=row.id,
                        owner_project=target.project,
                        created_at=now,
                    )
                )
                await self.outbox.add(
                    session,
                    event("linked", row, access.principal, int(row.version), owner=target.id),
                )

    async def forget(self, owners: list[int]) -> None:
        """Deleted items, test plans or runs keep no attachments (the attachments stay
        in their project); repeating it changes nothing."""
        async with self.db.transaction() as session:
            await session.execute(
                delete(attachment_links).where(attachment_links.c.owner.in_(owners))
            )
