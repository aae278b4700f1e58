"""Stored filters: who sees them, and what they find."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Row, and_, func, or_, select

from plumbline.common.context import require_principal
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


def _visible(user_id: int) -> Any:
    return or_(filters.c.public.is_(True), filters.c.author == user_id)


class Filters:
    """Filter storage and evaluation."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def page(
        self,
        project: int | None,
        author: int | None,
        favorites_only: bool,
        start_at: int,
        max_results: int,
    ) -> tuple[list[Row[Any]], int]:
        """Filters the caller may see: of a project, by an author, or their favourites."""
        user_id = require_principal().user_id
        conditions: list[Any] = [_visible(user_id)]
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
        """Visible filters by id; a single unknown id is NotFound."""
        user_id = require_principal().user_id
        async with self.db.read() as session:
            rows = (
                await session.execute(
                    select(filters)
                    .where(filters.c.id.in_(ids), _visible(user_id))
                    .order_by(filters.c.id)
                )
            ).all()
        check_batch(rows, ids, "filter")
        return list(rows)

    async def create(
        self, name: str, scope: str, specified_project: int | None, query: Any, public: bool
    ) -> int:
        """A new filter (labs): the query is checked before it is stored."""
        user_id = require_principal().user_id
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
        user_id = require_principal().user_id
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
        """Ids of the active items the filter finds (a page of them) and their total."""
        user_id = require_principal().user_id
        [stored] = await self.get_many([filter_id])
        scope: list[int] | None
        if stored.project_scope == "SPECIFIED":
            scope = [stored.specified_project]
        elif stored.project_scope == "CURRENT":
            if project is None:
                raise InvalidArgument("This filter runs on the current project: pass project.")
            scope = [project]
        else:
            scope = [project] if project is not None else None
        context = filterquery.Context(await self._records(scope), user_id)
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
