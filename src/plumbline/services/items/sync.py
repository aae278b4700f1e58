"""Synchronized items and workflow transitions."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Action, readable_where
from plumbline.common.catalog import Catalog
from plumbline.common.dates import utcnow
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.services.items.config import Configuration
from plumbline.services.items.events import item_event
from plumbline.services.items.items import Items
from plumbline.services.items.models import items


@dataclass(frozen=True)
class SyncState:
    """How far two items of one pool agree."""

    in_sync: bool
    has_collection: bool
    total_children: int
    total_missing: int
    total_out_of_sync: int


def _synchronized(config_fields: Any, fields: dict[str, Any]) -> dict[str, Any]:
    return {f.name: fields.get(f.name) for f in config_fields if f.synchronize}


def _agree(catalog: Catalog, one: Row[Any], other: Row[Any]) -> bool:
    """Whether two items of a pool hold the same values in their synchronized fields."""
    config_fields = catalog.item_type(one.item_type).fields
    return _synchronized(config_fields, json.loads(one.fields_json)) == _synchronized(
        config_fields, json.loads(other.fields_json)
    )


async def _children(session: AsyncSession, parent: int) -> list[Row[Any]]:
    return list(
        (
            await session.execute(
                select(items)
                .where(items.c.parent == parent, items.c.active.is_(True))
                .order_by(items.c.sort_order)
            )
        ).all()
    )


class Sync:
    """Pools of items that share a global id."""

    def __init__(self, items_: Items, config: Configuration) -> None:
        self.items = items_
        self.db = items_.db
        self.outbox = items_.outbox
        self.config = config

    async def pool(
        self, item_id: int, start_at: int, max_results: int
    ) -> tuple[list[Row[Any]], int]:
        """The other active items sharing ``item_id``'s global id.

        READ on the item; pool members in projects the caller may not read are left out
        (and not counted).
        """
        access = await self.items.access.current()
        [item] = await self.items.get_many([item_id])
        async with self.db.read() as session:
            where = (
                (items.c.global_id == item.global_id)
                & (items.c.id != item_id)
                & items.c.active.is_(True)
                & readable_where(access, items.c.project)
            )
            total = await session.scalar(select(func.count()).select_from(items).where(where))
            rows = (
                await session.execute(
                    select(items)
                    .where(where)
                    .order_by(items.c.id)
                    .offset(start_at)
                    .limit(max_results)
                )
            ).all()
        return list(rows), int(total or 0)

    async def add(self, pool_item: int, item_id: int) -> None:
        """``item_id`` adopts the global id of ``pool_item``."""
        await self._retag(pool_item, item_id, join=True)

    async def remove(self, pool_item: int, item_id: int) -> None:
        """``item_id`` leaves the pool with a global id of its own."""
        await self._retag(pool_item, item_id, join=False)

    async def _retag(self, pool_item: int, item_id: int, join: bool) -> None:
        """Changes the pool of ``item_id``: WRITE on both items."""
        access = await self.items.access.current()
        principal = access.principal
        if pool_item == item_id:
            raise InvalidArgument("An item cannot be synchronized with itself.")
        catalog = await self.items.config.catalog()
        async with self.outbox.transaction() as session:
            pool = await self.items.active(session, pool_item, access, Action.WRITE)
            other = (
                await session.execute(
                    select(items).where(items.c.id == item_id, items.c.active.is_(True))
                )
            ).first()
            if other is None:
                if join:
                    raise InvalidArgument(f"item: no item with id {item_id}.")
                raise NotFound(f"No item with id {item_id}.")
            access.require(Action.WRITE, other.project, f"item {item_id}")
            if join:
                if other.global_id == pool.global_id:
                    raise InvalidArgument(
                        f"Item {item_id} is already in the pool of item {pool_item}."
                    )
                if other.item_type != pool.item_type:
                    raise InvalidArgument("Only items of the same item type can be synchronized.")
                new_global_id = pool.global_id
            else:
                if other.global_id != pool.global_id:
                    raise NotFound(f"Item {item_id} is not synchronized with item {pool_item}.")
                new_global_id = f"GID-{uuid.uuid4().hex[:12].upper()}"
            await session.execute(
                update(items)
                .where(items.c.id == item_id)
                .values(
                    global_id=new_global_id,
                    version=other.version + 1,
                    modified_by=principal.user_id,
                    modified_at=utcnow(),
                )
            )
            await self.outbox.add(
                session,
                await item_event(
                    session,
                    "updated",
                    item_id,
                    catalog,
                    principal,
                    globalId=new_global_id,
                ),
            )

    async def status(self, item_id: int, synced_id: int) -> SyncState:
        """Whether two items of a pool agree on their synchronized fields (and children).

        READ on both items: each is read on its own, so either answers 404 or 401.
        """
        [first] = await self.items.get_many([item_id])
        [second] = await self.items.get_many([synced_id])
        if first.global_id != second.global_id:
            raise NotFound(f"Item {synced_id} is not synchronized with item {item_id}.")
        catalog = await self.config.catalog()
        async with self.db.read() as session:
            children = await _children(session, item_id)
            counterparts = await _children(session, synced_id)
        # Each child of the item is matched with a child of the synced item from its pool
        # (same global id), preferring one that agrees. A child without such a twin is
        # missing; a twin left over means the synced item has a child the item lacks.
        twins: dict[str, list[Row[Any]]] = {}
        for row in counterparts:
            twins.setdefault(row.global_id, []).append(row)
        missing = out_of_sync = 0
        for child in children:
            candidates = twins.get(child.global_id)
            if not candidates:
                missing += 1
                continue
            twin = next((t for t in candidates if _agree(catalog, child, t)), None)
            if twin is None:
                twin = candidates[0]
                out_of_sync += 1
            candidates.remove(twin)
        unmatched = sum(len(left) for left in twins.values())
        return SyncState(
            _agree(catalog, first, second) and missing == out_of_sync == unmatched == 0,
            bool(children or counterparts),
            len(children),
            missing,
            out_of_sync,
        )
