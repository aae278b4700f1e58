"""Searching items (``/abstractitems``): filters, ``contains`` and the sort orders.

``search_text`` holds the lower-cased string values of an item's fields; ``contains``
matches it literally, helped by a trigram index (see docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Row,
    Select,
    Text,
    and_,
    column,
    func,
    or_,
    select,
    table,
    text,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import operators
from sqlalchemy.sql.expression import UnaryExpression
from sqlalchemy.sql.operators import custom_op

from plumbline.common.access import Access
from plumbline.common.db import Database
from plumbline.common.errors import (
    InvalidArgument,
)
from plumbline.services.items.models import item_releases, items, projects


def search_text(fields: dict[str, Any]) -> str:
    """What ``contains`` searches: the item's string values, lower-cased."""
    return "\n".join(v for v in fields.values() if isinstance(v, str)).lower()


SORT_COLUMNS = {
    "id": (items.c.id,),
    "documentKey": (items.c.document_key,),
    "name": (items.c.name,),
    "createdDate": (items.c.created_at,),
    "modifiedDate": (items.c.modified_at,),
    "lastActivityDate": (items.c.last_activity_at,),
    "sequence": (items.c.project, items.c.global_sort_order),
    "globalSortOrder": (items.c.project, items.c.global_sort_order),
}


def _like_literal(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


#: SQLite's trigram index of ``search_text``, created by migration 0011 with raw DDL (an
#: FTS5 table cannot be declared in the models); its rowid is the item's id.
_items_fts = table("items_fts", column("rowid", BigInteger), column("search_text", Text))

#: Up to this many matches of ``contains``, PostgreSQL sorts the matches instead of
#: walking the sort order's index (see :func:`search`).
_FEW_MATCHES = 1000

#: The trigram index finds substrings of at least three characters; shorter ones scan.
_TRIGRAM = 3

#: Up to this many FTS5 hits (or a quarter of the items in scope), looking each one up
#: beats reading the items in scope; with more (a word most items hold) the scan is the
#: faster plan, as it was before the index.
_FEW_HITS = 500


def _fts_query(texts: list[str]) -> str | None:
    """The FTS5 query for any of ``texts``, or None when one is too short for trigrams.

    Inside double quotes everything is literal but ``"``, which is doubled.
    """
    lowered = [t.lower() for t in texts]
    if any(len(t) < _TRIGRAM for t in lowered):
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in lowered)


async def _fts_hits(
    session: AsyncSession, texts: list[str], scope: list[int] | None
) -> Select[Any] | None:
    """On SQLite, the ids the FTS5 table finds for ``texts``, if they are few enough to
    start from: at most ``_FEW_HITS`` or a quarter of the active items in ``scope`` (the
    projects' kept counts), whichever is more.

    They are candidates only: FTS5 folds case more widely than ``lower()`` (the long s,
    U+017F, finds ``s``), so the LIKE of :func:`_literal_contains` still decides. With a
    fixed limit, a word 2% of 200,000 items hold (4,000 hits) fell back to reading every
    item in scope: 390 ms against 4 ms at 2,000 items.
    """
    match = _fts_query(texts)
    if match is None:
        return None
    in_scope = select(func.coalesce(func.sum(projects.c.active_items), 0))
    if scope is not None:
        in_scope = in_scope.where(projects.c.id.in_(scope))
    limit = max(_FEW_HITS, int(await session.scalar(in_scope) or 0) // 4)
    hits = select(_items_fts.c.rowid).where(_items_fts.c.search_text.match(match))
    counted = select(func.count()).select_from(hits.limit(limit + 1).subquery())
    return hits if int(await session.scalar(counted) or 0) <= limit else None


def _literal_contains(texts: list[str]) -> ColumnElement[bool]:
    """``search_text`` holds any of ``texts``, literally (PostgreSQL's trigram index
    answers this LIKE)."""
    return or_(*(items.c.search_text.like(_like_literal(t), escape="\\") for t in texts))


def _unindexed(column: ColumnElement[Any]) -> ColumnElement[Any]:
    """SQLite's unary ``+``: the same value, but no index is chosen for the term."""
    return UnaryExpression(column, operator=custom_op("+"), type_=column.type)


@dataclass
class Search:
    """Filters of ``GET /abstractitems`` that items can answer."""

    projects: list[int]
    item_types: list[int]
    document_keys: list[str]
    releases: list[int]
    ranges: dict[str, tuple[Any, Any]]
    contains: list[str]
    sort_field: str
    descending: bool


async def search(
    db: Database, query: Search, start_at: int, max_results: int, access: Access
) -> tuple[list[Row[Any]], int]:
    """Active items matching every filter, in the requested order.

    Only items of projects the caller may read are found and counted: the condition is
    part of the one query (``project IN readable``), not a check of each row.
    """
    if query.sort_field not in SORT_COLUMNS:
        raise InvalidArgument(
            f"sortBy: {query.sort_field!r} cannot be sorted on; "
            f"use one of {', '.join(SORT_COLUMNS)}."
        )
    conditions = _conditions(query)
    order = [c.desc() if query.descending else c.asc() for c in SORT_COLUMNS[query.sort_field]]
    scope: list[int] | None = list(query.projects) or None
    readable = access.readable()
    if readable is not None:
        scope = sorted(readable if scope is None else readable.intersection(scope))
        if not scope:
            return [], 0
    async with db.read(settings=bool(query.contains)) as session:
        project: ColumnElement[Any] = items.c.project
        if query.contains:
            conditions.append(_literal_contains(query.contains))
            if not db.sqlite:
                # A cached generic plan cannot see the text, and takes the trigram index
                # even for words most items hold or texts too short for trigrams (2-4x
                # slower than a scan); a custom plan weighs each text.
                await session.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
            hits = await _fts_hits(session, query.contains, scope) if db.sqlite else None
            if hits is not None:
                conditions.append(items.c.id.in_(hits))
                # Without statistics SQLite prefers a project index, reading every item
                # of the project; few hits are cheaper to start from.
                project = _unindexed(project)
        if scope is not None:
            conditions.append(project.in_(scope))
        where = and_(*conditions)
        total = await session.scalar(select(func.count()).select_from(items).where(where))
        if query.contains and not db.sqlite and int(total or 0) <= _FEW_MATCHES:
            # PostgreSQL guesses matches are spread evenly and walks the sort order's
            # index, testing item after item until a page is full: 12 ms for a word 2%
            # of 20,000 items hold, against 1 ms for collecting the few matches (as the
            # count above just did) and sorting them. MATERIALIZED fixes that order.
            # With many matches the walk fills a page soon and is the cheaper plan.
            matches = select(items).where(where).cte("matches").prefix_with("MATERIALIZED")
            statement = select(matches).order_by(
                *(_same_column(matches, c) for c in order), matches.c.id
            )
        else:
            statement = select(items).where(where).order_by(*order, items.c.id)
        rows = (await session.execute(statement.offset(start_at).limit(max_results))).all()
    return list(rows), int(total or 0)


def _conditions(query: Search) -> list[Any]:
    """The filters on an item's own columns: active, of the item types, document keys and
    releases asked for, created, modified and last active within the ranges."""
    conditions: list[Any] = [items.c.active.is_(True)]
    if query.item_types:
        conditions.append(items.c.item_type.in_(query.item_types))
    if query.document_keys:
        conditions.append(items.c.document_key.in_(query.document_keys))
    if query.releases:
        conditions.append(
            items.c.id.in_(
                select(item_releases.c.item).where(item_releases.c.release.in_(query.releases))
            )
        )
    columns = {
        "created": items.c.created_at,
        "modified": items.c.modified_at,
        "lastActivity": items.c.last_activity_at,
    }
    for name, (low, high) in query.ranges.items():
        if low is not None:
            conditions.append(columns[name] >= low)
        if high is not None:
            conditions.append(columns[name] <= high)
    return conditions


def _same_column(alias: Any, ordering: UnaryExpression[Any]) -> UnaryExpression[Any]:
    """``ordering`` (``items.<col> ASC|DESC``) applied to ``alias``'s column of that name."""
    column: ColumnElement[Any] = alias.c[ordering.element.name]
    return column.desc() if ordering.modifier is operators.desc_op else column.asc()
