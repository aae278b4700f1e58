"""What every owner of abstract items outside the items service does with its records'
rows: read one the caller may act on, several by id, refuse another's lock, write a
change with its system members, set the lock, and render them as messages (``Messages``).

A records table has the abstract item's system columns (``id``, ``project``, ``locked``,
``locked_by``, ``last_locked_at``, ``version``, ``modified_by``, ``modified_at``,
``last_activity_at``); ``noun`` names a record in messages ("test run", "attachment").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message
from sqlalchemy import ColumnElement, Row, Table, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Access, AccessCache, Action, readable
from plumbline.common.catalog import Catalog
from plumbline.common.context import Principal
from plumbline.common.db import check_batch, first_or_missing
from plumbline.common.errors import FailedPrecondition
from plumbline.common.itemsclient import ItemsClient
from plumbline.common.rpc import page_info

M = TypeVar("M", bound=Message)
P = TypeVar("P", bound=Message)


async def load(
    session: AsyncSession,
    table: Table,
    record_id: int,
    noun: str,
    access: Access,
    action: Action = Action.READ,
    *,
    for_update: bool = False,
    where: Sequence[ColumnElement[bool]] = (),
) -> Row[Any]:
    """One record the caller may ``action``, or NotFound / PermissionDenied."""
    statement = select(table).where(table.c.id == record_id, *where)
    if for_update:
        statement = statement.with_for_update()
    row = await first_or_missing(session, statement, f"No {noun} with id {record_id}.")
    access.require(action, row.project, f"{noun} {record_id}")
    return row


def by_ids(
    rows: Sequence[Row[Any]], ids: list[int], access: Access, noun: str, skip_missing: bool
) -> list[Row[Any]]:
    """The rows read for ``ids``, in the order asked. One id asked is NotFound or refused
    when it cannot be read; several leave out what is missing or hidden (``include=``
    reads), as does ``skip_missing``."""
    if skip_missing:
        kept = [r for r in rows if access.may(Action.READ, r.project)]
    else:
        check_batch(rows, ids, noun)
        kept = readable(access, list(rows), ids, noun)
    found = {r.id: r for r in kept}
    return [found[i] for i in dict.fromkeys(ids) if i in found]


def check_lock(row: Any, caller: Principal, noun: str) -> None:
    """A record locked by someone else is theirs to change."""
    if row.locked and row.locked_by != caller.user_id:
        raise FailedPrecondition(
            f"{noun.capitalize()} {row.id} is locked by user {row.locked_by}; "
            "only they can change it."
        )


async def touch(
    session: AsyncSession,
    table: Table,
    row: Row[Any],
    caller: Principal,
    now: datetime,
    **values: Any,
) -> int:
    """Writes ``values`` with the change's system members; the new version number."""
    version = int(row.version) + 1
    await session.execute(
        update(table)
        .where(table.c.id == row.id)
        .values(
            version=version,
            modified_by=caller.user_id,
            modified_at=now,
            last_activity_at=now,
            **values,
        )
    )
    return version


async def write_lock(
    session: AsyncSession,
    table: Table,
    row: Row[Any],
    locked: bool,
    caller: Principal,
    noun: str,
    now: datetime,
) -> None:
    """``PUT …/lock``: only whoever holds a lock (or an organisation administrator)
    changes it."""
    if row.locked and row.locked_by != caller.user_id and not caller.is_admin:
        raise FailedPrecondition(
            f"{noun.capitalize()} {row.id} is locked by user {row.locked_by}; "
            "only they can change the lock."
        )
    values: dict[str, Any] = {"locked": locked, "locked_by": caller.user_id if locked else None}
    if locked:
        values["last_locked_at"] = now
    await session.execute(update(table).where(table.c.id == row.id).values(**values))


class Messages(Generic[M, P]):
    """Renders rows for one request (one configuration read, one access lookup): each
    with ``render`` (row, configuration, dates with time, access), and a page of them as
    ``page_type`` (its one list and its ``page_info``)."""

    def __init__(
        self,
        items: ItemsClient,
        access: AccessCache,
        render: Callable[[Row[Any], Catalog, bool, Access], M],
        page_type: type[P],
    ) -> None:
        self.items = items
        self.access = access
        self.render = render
        self.page_type = page_type
        (self._listed,) = (f.name for f in page_type.DESCRIPTOR.fields if f.is_repeated)

    async def many(self, rows: Sequence[Row[Any]], dates_with_time: bool) -> list[M]:
        """Every row as a message, in order."""
        catalog = await self.items.catalog()
        access = await self.access.current()
        return [self.render(r, catalog, dates_with_time, access) for r in rows]

    async def page(
        self, rows: Sequence[Row[Any]], start: int, total: int, dates_with_time: bool
    ) -> P:
        """A page of them."""
        listed = await self.many(rows, dates_with_time)
        return self.page_type(
            **{self._listed: listed}, page_info=page_info(start, len(rows), total)
        )
