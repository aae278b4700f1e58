"""Stored filters: who sees them, and what they find."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Row, and_, func, or_, select

from plumbline.common.access import Access, AccessCache, Action, readable
from plumbline.common.db import Database, check_batch, insert_id
from plumbline.common.errors import InvalidArgument
from plumbline.services.items import filterquery
from plumbline.services.items.models import (
    favorite_filters,
    filters,
    item_tags,
    items,
    projects,
    relationships,
)

SCOPES = ("ALL", "CURRENT", "SPECIFIED")


def _visible(access: Access) -> Any:
    """Public filters and the caller's own; a filter of a SPECIFIED project only for
    those who may read that project."""
    user_id = access.principal.user_id
    seen = or_(filters.c.public.is_(True), filters.c.author == user_id)
    projects = access.readable()
    if projects is None:
        return seen
    return and_(
        seen,
        or_(
            filters.c.specified_project.is_(None),
            filters.c.specified_project.in_(sorted(projects)),
        ),
    )


def _specified(row: Any) -> int:
    return int(row.specified_project)


class Filters:
    """Filter storage and evaluation.

    A filter of scope SPECIFIED belongs to its project: reading it needs READ there and
    creating it WRITE. Filters of scope ALL or CURRENT belong to no project; what they
    find is limited to the projects the caller may read.
    """

    def __init__(self, db: Database, access: AccessCache) -> None:
        self.db = db
        self.access = access

    async def page(
        self,
        project: int | None,
        author: int | None,
        favorites_only: bool,
        start_at: int,
        max_results: int,
    ) -> tuple[list[Row[Any]], int]:
        """Filters the caller may see: of a project (READ on it), by an author, or their
        favourites."""
        access = await self.access.current()
        user_id = access.principal.user_id
        if project is not None:
            access.require(Action.READ, project)
        conditions: list[Any] = [_visible(access)]
        query = select(filters)
        if favorites_only:
            query = query.join(
                favorite_filters,
                and_(
                    favorite_filters.c.filter == filters.c.id, favorite_filters.c.user_id == user_id
                ),
            )
        elif project is None:
            raise InvalidArgument("the query parameter project is required")
        if project is not None:
            conditions.append(
                or_(
                    filters.c.project_scope.in_(("ALL", "CURRENT")),
                    filters.c.specified_project == project,
                )
            )
        if author is not None:
            conditions.append(filters.c.author == author)
        query = query.where(*conditions)
        async with self.db.read() as session:
            total = await session.scalar(select(func.count()).select_from(query.subquery()))
            rows = (
                await session.execute(
                    query.order_by(filters.c.id).offset(start_at).limit(max_results)
                )
            ).all()
        return list(rows), int(total or 0)

    async def get_many(self, ids: list[int]) -> list[Row[Any]]:
        """Visible filters by id; a single unknown id is NotFound, a single one of a
        project the caller may not read is refused (401)."""
        access = await self.access.current()
        user_id = access.principal.user_id
        async with self.db.read() as session:
            rows = (
                await session.execute(
                    select(filters)
                    .where(
                        filters.c.id.in_(ids),
                        or_(filters.c.public.is_(True), filters.c.author == user_id),
                    )
                    .order_by(filters.c.id)
                )
            ).all()
        check_batch(rows, ids, "filter")
        scoped = [r for r in rows if r.specified_project is not None]
        kept = {r.id for r in readable(access, scoped, ids, "filter", _specified)}
        return [r for r in rows if r.specified_project is None or r.id in kept]

    async def create(
        self, name: str, scope: str, specified_project: int | None, query: Any, public: bool
    ) -> int:
        """A new filter (labs): the query is checked before it is stored; one of a
        SPECIFIED project needs WRITE there."""
        access = await self.access.current()
        user_id = access.principal.user_id
        if not name.strip():
            raise InvalidArgument("name must not be empty.")
        if scope not in SCOPES:
            raise InvalidArgument(
                f"projectScope must be one of {', '.join(SCOPES)}, got {scope!r}."
            )
        if (scope == "SPECIFIED") != (specified_project is not None):
            raise InvalidArgument(
                "specifiedProject is required with projectScope SPECIFIED, and only then."
            )
        filterquery.validate(query)
        async with self.db.transaction() as session:
            if (
                specified_project is not None
                and (
                    await session.scalar(
                        select(projects.c.id).where(projects.c.id == specified_project)
                    )
                )
                is None
            ):
                raise InvalidArgument(f"specifiedProject: no project with id {specified_project}.")
            if specified_project is not None:
                access.require(
                    Action.WRITE, specified_project, f"the filters of project {specified_project}"
                )
            return await insert_id(
                session,
                filters.insert().values(
                    name=name.strip(),
                    author=user_id,
                    project_scope=scope,
                    specified_project=specified_project,
                    filter_query=json.dumps(query),
                    public=public,
                ),
            )

    async def favorite(self, filter_id: int) -> None:
        """Marks a visible filter as one of the caller's favourites."""
        user_id = (await self.access.current()).principal.user_id
        await self.get_many([filter_id])
        async with self.db.transaction() as session:
            exists = await session.scalar(
                select(favorite_filters.c.filter).where(
                    favorite_filters.c.user_id == user_id, favorite_filters.c.filter == filter_id
                )
            )
            if exists is None:
                await session.execute(
                    favorite_filters.insert().values(user_id=user_id, filter=filter_id)
                )

    async def results(
        self, filter_id: int, project: int | None, start_at: int, max_results: int
    ) -> tuple[list[int], int]:
        """Ids of the active items the filter finds (a page of them) and their total.

        Only items of projects the caller may read are candidates (so sub-queries cannot
        reach others either); a ``project`` the caller may not read is refused.
        """
        access = await self.access.current()
        [stored] = await self.get_many([filter_id])
        scope: list[int] | None
        if stored.project_scope == "SPECIFIED":
            scope = [stored.specified_project]
        elif stored.project_scope == "CURRENT":
            if project is None:
                raise InvalidArgument("This filter runs on the current project: pass project.")
            access.require(Action.READ, project)
            scope = [project]
        elif project is not None:
            access.require(Action.READ, project)
            scope = [project]
        else:
            everything = access.readable()
            scope = None if everything is None else sorted(everything)
        records = await self._records(scope)
        context = filterquery.Context(records, access.principal.user_id)
        found = filterquery.run(json.loads(stored.filter_query), context)
        return [r.id for r in found[start_at : start_at + max_results]], len(found)

    async def _records(self, project_ids: list[int] | None) -> dict[int, filterquery.Record]:
        where: Any = items.c.active.is_(True)
        if project_ids is not None:
            where = and_(where, items.c.project.in_(project_ids))
        async with self.db.read() as session:
            rows = (await session.execute(select(items).where(where))).all()
            ids = [r.id for r in rows]
            tags: dict[int, set[int]] = {}
            related: dict[int, set[int]] = {}
            if ids:
                for item, tag in (
                    await session.execute(
                        select(item_tags.c.item, item_tags.c.tag).where(item_tags.c.item.in_(ids))
                    )
                ).all():
                    tags.setdefault(item, set()).add(tag)
                for source, target in (
                    await session.execute(
                        select(relationships.c.from_item, relationships.c.to_item).where(
                            or_(
                                relationships.c.from_item.in_(ids), relationships.c.to_item.in_(ids)
                            )
                        )
                    )
                ).all():
                    related.setdefault(source, set()).add(target)
                    related.setdefault(target, set()).add(source)
        return {
            r.id: filterquery.Record(
                id=r.id,
                parent=r.parent,
                system={
                    "id": r.id,
                    "documentKey": r.document_key,
                    "globalId": r.global_id,
                    "itemType": r.item_type,
                    "project": r.project,
                    "createdDate": r.created_at,
                    "modifiedDate": r.modified_at,
                    "lastActivityDate": r.last_activity_at,
                    "createdBy": r.created_by,
                    "modifiedBy": r.modified_by,
                    "sequence": r.sequence,
                    "globalSortOrder": r.global_sort_order,
                },
                fields=json.loads(r.fields_json),
                tags=tags.get(r.id, set()),
                related=related.get(r.id, set()),
            )
            for r in rows
        }
