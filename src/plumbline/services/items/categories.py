"""Category paths (labs): a tree of categories that can be applied to items."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import AccessCache, Action
from plumbline.common.context import require_admin
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, affected, insert_id, unique_violation
from plumbline.common.errors import AlreadyExists, InvalidArgument, NotFound
from plumbline.common.outbox import Outbox
from plumbline.services.items.config import Configuration
from plumbline.services.items.events import item_event
from plumbline.services.items.models import categories, item_categories, items


def _paths(rows: list[Any]) -> dict[int, str]:
    by_id = {r.id: r for r in rows}
    paths: dict[int, str] = {}

    def path(row: Any) -> str:
        if row.id not in paths:
            parent = by_id.get(row.parent) if row.parent is not None else None
            paths[row.id] = f"{path(parent)}/{row.name}" if parent is not None else row.name
        return paths[row.id]

    for row in rows:
        path(row)
    return paths


class Categories:
    """Category rules and storage."""

    def __init__(
        self, db: Database, outbox: Outbox, config: Configuration, access: AccessCache
    ) -> None:
        self.db = db
        self.outbox = outbox
        self.config = config
        self.access = access

    async def _item_project(self, session: AsyncSession, item: int) -> int:
        """The project of an active item (NotFound without one)."""
        project = await session.scalar(
            select(items.c.project).where(items.c.id == item, items.c.active.is_(True))
        )
        if project is None:
            raise NotFound(f"No item with id {item}.")
        return int(project)

    async def page(
        self, item: int | None, start_at: int, max_results: int, ids: list[int] | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Every category path, the ones applied to an item (READ on the item), or those
        with ``ids`` (an item's at one of its versions), in path order."""
        access = await self.access.current()
        async with self.db.read() as session:
            rows = list((await session.execute(select(categories))).all())
            applied: set[int] | None = None
            if item is not None:
                project = await self._item_project(session, item)
                access.require(Action.READ, project, f"item {item}")
                applied = set(
                    (
                        await session.scalars(
                            select(item_categories.c.category).where(item_categories.c.item == item)
                        )
                    ).all()
                )
        paths = _paths(rows)
        records = sorted(
            (
                {
                    "id": r.id,
                    "name": r.name,
                    "parent": r.parent,
                    "path": paths[r.id],
                    "visible": r.visible,
                }
                for r in rows
                if (applied is None or r.id in applied) and (ids is None or r.id in ids)
            ),
            key=lambda c: c["path"],
        )
        return records[start_at : start_at + max_results], len(records)

    async def create(self, name: str, parent: int | None) -> int:
        """``POST /categories``."""
        require_admin("change category paths")
        if not name.strip() or "/" in name:
            raise InvalidArgument("name must not be empty or contain '/'.")
        try:
            async with self.db.transaction() as session:
                if (
                    parent is not None
                    and (
                        await session.scalar(
                            select(categories.c.id).where(categories.c.id == parent)
                        )
                    )
                    is None
                ):
                    raise InvalidArgument(f"parent: no category with id {parent}.")
                duplicate = select(categories.c.id).where(categories.c.name == name.strip())
                duplicate = duplicate.where(
                    categories.c.parent.is_(None)
                    if parent is None
                    else categories.c.parent == parent
                )
                if await session.scalar(duplicate) is not None:
                    raise AlreadyExists(f"A category named {name.strip()!r} already exists there.")
                return await insert_id(
                    session,
                    categories.insert().values(name=name.strip(), parent=parent, visible=True),
                )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    f"A category named {name.strip()!r} already exists there."
                ) from None
            raise

    async def set_visible(self, category: int, visible: bool) -> None:
        """``PUT /categories/{id}/visibility``."""
        require_admin("change category paths")
        async with self.db.transaction() as session:
            changed = await affected(
                session,
                update(categories).where(categories.c.id == category).values(visible=visible),
            )
        if changed == 0:
            raise NotFound(f"No category with id {category}.")

    async def change_item(self, item: int, add: list[int], remove: list[int]) -> None:
        """``POST /items/{id}/categories``: applies and removes categories (WRITE on the
        item); a change of them is a new version of the item."""
        access = await self.access.current()
        if not add and not remove:
            raise InvalidArgument("Give categories to add or remove.")
        catalog = await self.config.catalog()
        async with self.outbox.transaction() as session:
            project = await self._item_project(session, item)
            access.require(Action.WRITE, project, f"item {item}")
            known = set(
                (
                    await session.scalars(
                        select(categories.c.id).where(categories.c.id.in_(add + remove))
                    )
                ).all()
            )
            unknown = sorted(set(add + remove) - known)
            if unknown:
                raise InvalidArgument(f"No category with id {', '.join(map(str, unknown))}.")
            current = set(
                (
                    await session.scalars(
                        select(item_categories.c.category).where(item_categories.c.item == item)
                    )
                ).all()
            )
            for category in sorted(set(add) - current):
                await session.execute(item_categories.insert().values(item=item, category=category))
            if remove:
                await session.execute(
                    item_categories.delete().where(
                        item_categories.c.item == item, item_categories.c.category.in_(remove)
                    )
                )
            if (current | set(add)) - set(remove) != current:
                now = utcnow()
                await session.execute(
                    update(items)
                    .where(items.c.id == item)
                    .values(
                        version=items.c.version + 1,
                        modified_by=access.principal.user_id,
                        modified_at=now,
                        last_activity_at=now,
                    )
                )
                await self.outbox.add(
                    session, await item_event(session, "updated", item, catalog, access.principal)
                )
