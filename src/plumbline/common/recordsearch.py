"""The ``/abstractitems`` search as every owner of abstract items outside the items
service answers it: one table whose rows carry the abstract item's system columns
(``id``, ``project``, ``item_type``, ``document_key``, ``name``, ``fields_json``,
``created_at``, ``modified_at``, ``last_activity_at``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, FromClause, Row, Select, Table, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.api.core.v1 import core_pb2
from plumbline.common.access import Access, readable_where
from plumbline.common.dates import parse_datetime
from plumbline.common.errors import InvalidArgument

#: ``sortBy`` of ``/abstractitems`` -> the columns, in order. Records outside the item
#: tree sort by project, then as created (ids come from each replica's own block, so they
#: are not in creation order).
SORTS: dict[str, tuple[str, ...]] = {
    "id": ("id",),
    "documentKey": ("document_key",),
    "name": ("name",),
    "createdDate": ("created_at",),
    "modifiedDate": ("modified_at",),
    "lastActivityDate": ("last_activity_at",),
    "sequence": ("project", "created_at"),
    "globalSortOrder": ("project", "created_at"),
}

DATES = {"created": "created_at", "modified": "modified_at", "last_activity": "last_activity_at"}


@dataclass
class Search:
    """What ``/abstractitems`` asks of one owner's records."""

    projects: list[int] = field(default_factory=list)
    item_types: list[int] = field(default_factory=list)
    document_keys: list[str] = field(default_factory=list)
    dates: dict[str, tuple[datetime | None, datetime | None]] = field(default_factory=dict)
    contains: list[str] = field(default_factory=list)
    sort: str = "sequence"
    descending: bool = False

    @classmethod
    def of(cls, request: core_pb2.RecordSearch) -> Search:
        """The search a request message asks for."""
        search = cls(
            projects=list(request.projects),
            item_types=list(request.item_types),
            document_keys=list(request.document_keys),
            contains=list(request.contains),
            sort=request.sort_field or "sequence",
            descending=request.sort_descending,
        )
        for name in DATES:
            low, high = getattr(request, f"{name}_from"), getattr(request, f"{name}_to")
            if low or high:
                search.dates[name] = (
                    parse_datetime(low, name) if low else None,
                    parse_datetime(high, name) if high else None,
                )
        return search

    def where(self, table: Table, access: Access) -> list[ColumnElement[bool]]:
        """The conditions on ``table``'s rows, the caller's readable projects included."""
        if self.sort not in SORTS:
            raise InvalidArgument(f"sortBy: these records cannot be sorted by {self.sort!r}.")
        c = table.c
        where: list[ColumnElement[bool]] = [readable_where(access, c.project)]
        if self.projects:
            where.append(c.project.in_(self.projects))
        if self.item_types:
            where.append(c.item_type.in_(self.item_types))
        if self.document_keys:
            where.append(c.document_key.in_(self.document_keys))
        for name, (low, high) in self.dates.items():
            column = c[DATES[name]]
            if low is not None:
                where.append(column >= low)
            if high is not None:
                where.append(column <= high)
        if self.contains:
            text = func.lower(c.fields_json)
            where.append(or_(*(text.contains(t.lower(), autoescape=True) for t in self.contains)))
        return where

    def order(self, table: Table) -> list[Any]:
        """The sort columns, then the id."""
        columns = [table.c[name] for name in SORTS[self.sort]]
        return [*(c.desc() if self.descending else c.asc() for c in columns), table.c.id]


async def page(
    session: AsyncSession,
    source: FromClause,
    where: list[ColumnElement[bool]],
    order: list[Any],
    start: int,
    size: int,
    columns: Select[Any] | None = None,
) -> tuple[list[Row[Any]], int]:
    """One page of the rows of ``source`` (a table or a join) that match, and how many
    match in all; ``columns`` selects other than all of ``source``'s."""
    total = await session.scalar(select(func.count()).select_from(source).where(*where))
    query = select(source) if columns is None else columns.select_from(source)
    rows = (
        await session.execute(query.where(*where).order_by(*order).offset(start).limit(size))
    ).all()
    return list(rows), int(total or 0)
