"""Attachment records: create, read by id, search, lock and delete."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Row, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common import records as shared
from plumbline.common.access import Access, AccessCache, Action
from plumbline.common.context import Principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database
from plumbline.common.events import Event
from plumbline.common.fields import check_fields
from plumbline.common.itemsclient import ItemsClient
from plumbline.common.outbox import Outbox
from plumbline.common.recordsearch import Search, page
from plumbline.services.attachments.api.messages import snapshot
from plumbline.services.attachments.models import attachment_links, attachments, blobs

#: The item type key of attachments, and how messages name one.
ATTACHMENT, NOUN = "ATT", "attachment"


class Domain:
    """What every part of the attachments service works with."""

    def __init__(
        self, db: Database, outbox: Outbox, items: ItemsClient, access: AccessCache
    ) -> None:
        self.db = db
        self.outbox = outbox
        self.items = items
        self.access = access


async def load(
    session: AsyncSession,
    attachment_id: int,
    access: Access,
    action: Action = Action.READ,
    *,
    for_update: bool = False,
) -> Row[Any]:
    """One attachment the caller may ``action``, or NotFound / PermissionDenied."""
    return await shared.load(
        session, attachments, attachment_id, NOUN, access, action, for_update=for_update
    )


def check_lock(row: Any, caller: Principal) -> None:
    """An attachment locked by someone else is theirs to change."""
    shared.check_lock(row, caller, NOUN)


def event(action: str, row: Any, actor: Principal, version: int, **extra: Any) -> Event:
    """``attachments.attachment.<action>`` with what the activity feed shows; a deletion
    says so in its payload (``deleted``), for the history."""
    if action == "deleted":
        extra["deleted"] = True
    return Event(
        f"attachments.attachment.{action}",
        actor=actor.user_id,
        project=row.project,
        object_ids=[row.id],
        version=version,
        payload={
            "itemType": row.item_type,
            "name": row.name,
            "documentKey": row.document_key,
            "fileName": row.file_name,
            **extra,
        },
    )


async def touch(session: AsyncSession, row: Row[Any], caller: Principal, **values: Any) -> int:
    """Writes ``values`` with the change's system members; the new version number."""
    return await shared.touch(session, attachments, row, caller, utcnow(), **values)


class Records(Domain):
    """The attachment records of every project."""

    async def create(self, project: int, values: Any) -> int:
        """``POST /projects/{id}/attachments``: a record without a file yet."""
        access = await self.access.current()
        access.require(Action.WRITE, project, f"the attachments of project {project}")
        catalog = await self.items.catalog()
        item_type = await self.items.item_type(ATTACHMENT)
        fields = check_fields(catalog, item_type, values, creating=True)
        [key] = await self.items.document_keys(project, item_type.id, 1)
        [attachment_id] = await self.items.new_ids(1)
        caller = access.principal
        now = utcnow()
        async with self.outbox.transaction() as session:
            await session.execute(
                attachments.insert().values(
                    id=attachment_id,
                    project=project,
                    item_type=item_type.id,
                    document_key=key,
                    global_id=f"GID-{ATTACHMENT}-{attachment_id}",
                    name=str(fields.get("name", ""))[:255],
                    fields_json=json.dumps(fields),
                    version=1,
                    created_by=caller.user_id,
                    modified_by=caller.user_id,
                    created_at=now,
                    modified_at=now,
                    last_activity_at=now,
                )
            )
            row = await load(session, attachment_id, access)
            await self.outbox.add(
                session, event("created", row, caller, 1, **snapshot(row, catalog, access))
            )
        return attachment_id

    async def get(self, ids: list[int], skip_missing: bool) -> list[Row[Any]]:
        """Attachments by id, in the order asked.

        One id asked is NotFound or refused when it cannot be read; several leave out
        what is missing or hidden (``include=`` reads), as does ``skip_missing``.
        """
        access = await self.access.current()
        async with self.db.read() as session:
            rows = list(
                (await session.execute(select(attachments).where(attachments.c.id.in_(ids)))).all()
            )
        return shared.by_ids(rows, ids, access, NOUN, skip_missing)

    async def search(self, search: Search, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """``/abstractitems``: the readable attachments that match, in the order asked."""
        access = await self.access.current()
        where = search.where(attachments, access)
        async with self.db.read() as session:
            return await page(session, attachments, where, search.order(attachments), start, size)

    async def set_lock(self, attachment_id: int, locked: bool) -> None:
        """``PUT /attachments/{id}/lock``."""
        access = await self.access.current()
        caller = access.principal
        async with self.outbox.transaction() as session:
            row = await load(session, attachment_id, access, Action.WRITE, for_update=True)
            await shared.write_lock(session, attachments, row, locked, caller, NOUN, utcnow())

    async def delete(self, attachment_id: int) -> str | None:
        """``DELETE /rest/labs/attachments/{id}``: the record and its links; the blob key
        of its file, which the caller removes from the store once this has committed (it
        is listed in ``blobs`` until then, so a crash leaves nothing behind)."""
        access = await self.access.current()
        caller = access.principal
        async with self.outbox.transaction() as session:
            row = await load(session, attachment_id, access, Action.WRITE, for_update=True)
            check_lock(row, caller)
            await session.execute(
                delete(attachment_links).where(attachment_links.c.attachment == attachment_id)
            )
            await session.execute(delete(attachments).where(attachments.c.id == attachment_id))
            if row.blob:
                await session.execute(
                    blobs.insert().values(key=row.blob, state="dropped", since=utcnow())
                )
            await self.outbox.add(session, event("deleted", row, caller, int(row.version) + 1))
        return str(row.blob) if row.blob else None
