"""Any test record by id, the ``/abstractitems`` search over them, and locks."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Row, func, or_, select
from sqlalchemy.sql.elements import KeyedColumnElement

from plumbline.common.access import AccessCache, Action, readable, readable_where
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, check_batch
from plumbline.common.errors import FailedPrecondition, InvalidArgument, NotFound
from plumbline.common.outbox import Outbox
from plumbline.services.testmgmt import store
from plumbline.services.testmgmt.models import records
from plumbline.services.testmgmt.store import NOUNS, PLAN, RUN

#: ``sortBy`` of ``/abstractitems``, as columns of test records.
SORTS: dict[str, tuple[KeyedColumnElement[Any], ...]] = {
    "id": (records.c.id,),
    "documentKey": (records.c.document_key,),
    "name": (records.c.name,),
    "createdDate": (records.c.created_at,),
    "modifiedDate": (records.c.modified_at,),
    "lastActivityDate": (records.c.last_activity_at,),
    # Test records have no place in the item tree: by project, then as created (ids come
    # from each replica's own block, so they are not in creation order).
    "sequence": (records.c.project, records.c.created_at),
    "globalSortOrder": (records.c.project, records.c.created_at),
}


@dataclass
class Search:
    """What ``/abstractitems`` asks of test records."""

    projects: list[int] = field(default_factory=list)
    item_types: list[int] = field(default_factory=list)
    document_keys: list[str] = field(default_factory=list)
    dates: dict[str, tuple[datetime | None, datetime | None]] = field(default_factory=dict)
    contains: list[str] = field(default_factory=list)
    sort: str = "sequence"
    descending: bool = False


DATE_COLUMNS = {
    "created": records.c.created_at,
    "modified": records.c.modified_at,
    "last_activity": records.c.last_activity_at,
}


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
        if skip_missing:
            rows = [r for r in rows if access.may(Action.READ, r.project)]
        else:
            check_batch(rows, ids, noun)
            rows = readable(access, list(rows), ids, noun)
        by_id = {r.id: r for r in rows}
        return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]

    async def search(self, search: Search, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """The readable test records that match, in the order asked."""
        if search.sort not in SORTS:
            raise InvalidArgument(f"sortBy: test records cannot be sorted by {search.sort!r}.")
        access = await self.access.current()
        where: list[ColumnElement[bool]] = [readable_where(access, records.c.project)]
        if search.projects:
            where.append(records.c.project.in_(search.projects))
        if search.item_types:
            where.append(records.c.item_type.in_(search.item_types))
        if search.document_keys:
            where.append(records.c.document_key.in_(search.document_keys))
        for name, (low, high) in search.dates.items():
            column = DATE_COLUMNS[name]
            if low is not None:
                where.append(column >= low)
            if high is not None:
                where.append(column <= high)
        if search.contains:
            text = func.lower(records.c.fields_json)
            where.append(or_(*(text.contains(c.lower(), autoescape=True) for c in search.contains)))
        columns = SORTS[search.sort]
        order = [c.desc() if search.descending else c.asc() for c in columns]
        async with self.db.read() as session:
            return await store.page(session, records, where, [*order, records.c.id], start, size)

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
            if row.locked and row.locked_by != caller.user_id and not caller.is_admin:
                raise FailedPrecondition(
                    f"{NOUNS[row.kind].capitalize()} {record_id} is locked by user "
                    f"{row.locked_by}; only they can change the lock."
                )
            values: dict[str, Any] = {
                "locked": locked,
                "locked_by": caller.user_id if locked else None,
            }
            if locked:
                values["last_locked_at"] = utcnow()
            await session.execute(
                records.update().where(records.c.id == record_id).values(**values)
            )
