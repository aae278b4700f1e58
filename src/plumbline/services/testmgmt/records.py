"""Any test record by id, the ``/abstractitems`` search over them, and locks."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Row, select

from plumbline.common import records as shared
from plumbline.common.access import AccessCache, Action
from plumbline.common.dates import utcnow
from plumbline.common.db import Database
from plumbline.common.errors import NotFound
from plumbline.common.outbox import Outbox
from plumbline.common.recordsearch import Search, page
from plumbline.services.testmgmt.models import records
from plumbline.services.testmgmt.store import NOUNS, PLAN, RUN


class Records:
    """Reads across kinds, and the lock every plan and run has."""

    def __init__(self, db: Database, outbox: Outbox, access: AccessCache) -> None:
        self.db = db
        self.outbox = outbox
        self.access = access

    async def get(self, ids: list[int], kind: str | None, skip_missing: bool) -> list[Row[Any]]:
        """Records by id, in the order asked; ``kind`` limits them to one kind.

        One id asked is NotFound or refused when it cannot be read; several leave out
        what is missing or hidden (``include=`` reads), as does ``skip_missing``.
        """
        access = await self.access.current()
        where: list[ColumnElement[bool]] = [records.c.id.in_(ids)]
        if kind:
            where.append(records.c.kind == kind)
        async with self.db.read() as session:
            rows = (await session.execute(select(records).where(*where))).all()
        noun = NOUNS[kind] if kind else "abstract item"
        return shared.by_ids(rows, ids, access, noun, skip_missing)

    async def search(self, search: Search, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """The readable test records that match, in the order asked."""
        access = await self.access.current()
        where = search.where(records, access)
        async with self.db.read() as session:
            return await page(session, records, where, search.order(records), start, size)

    async def set_lock(self, record_id: int, locked: bool, kind: str | None = None) -> None:
        """``PUT /testplans/{id}/lock`` and ``/testruns/{id}/lock`` (``kind`` is the
        path's)."""
        access = await self.access.current()
        caller = access.principal
        async with self.outbox.transaction() as session:
            row = (
                await session.execute(
                    select(records).where(records.c.id == record_id).with_for_update()
                )
            ).first()
            if row is None or row.kind not in (PLAN, RUN) or kind not in (None, row.kind):
                noun = NOUNS[kind] if kind else "test plan or test run"
                raise NotFound(f"No {noun} with id {record_id}.")
            action = Action.EXECUTE if row.kind == RUN else Action.WRITE
            access.require(action, row.project, f"{NOUNS[row.kind]} {record_id}")
            await shared.write_lock(
                session, records, row, locked, caller, NOUNS[row.kind], utcnow()
            )
