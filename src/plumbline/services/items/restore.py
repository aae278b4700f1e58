"""Deleted items: reading them back for an activity, and restoring them.

``DELETE /items/{id}`` makes the item and its subtree inactive and hides their
relationships; nothing else changes them afterwards (tree writes touch active items
only), so each keeps its parent, sort order and sequence as they were at the deletion.
A restore makes the same items active again, each with a new version, and puts the item
back in its old place: under its old parent, at its old position among the siblings (or
last, when fewer are left), or at the root of its project when the parent is no longer
active. Document keys and global ids stay as they were. The relationships the deletion
hid show again where both ends are active, each with an ``items.relationship.restored``
event (the history had ended them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Row, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import AccessCache, Action, readable
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, first_or_missing
from plumbline.common.errors import FailedPrecondition
from plumbline.common.outbox import Outbox
from plumbline.services.items import tree
from plumbline.services.items.config import Configuration
from plumbline.services.items.events import item_event
from plumbline.services.items.models import items
from plumbline.services.items.relationships import show_relationships_of

#: The action of the events a restore writes (``items.item.restored``), one per item.
RESTORED = "restored"


class Restore:
    """Deleted items, read and brought back."""

    def __init__(
        self, db: Database, outbox: Outbox, config: Configuration, access: AccessCache
    ) -> None:
        self.db = db
        self.outbox = outbox
        self.config = config
        self.access = access

    async def get_many(self, ids: list[int]) -> list[Row[Any]]:
        """Items by id, active or not, that the caller may read, in the order asked; ids
        of no item are left out (an activity may name a test record), and so are items
        the caller may not read, unless exactly one id was asked (then 401)."""
        access = await self.access.current()
        async with self.db.read() as session:
            rows = (await session.execute(select(items).where(items.c.id.in_(ids)))).all()
        kept = readable(access, list(rows), ids, "item")
        order = {item_id: position for position, item_id in enumerate(ids)}
        return sorted(kept, key=lambda r: order[r.id])

    async def restore(self, item_id: int, subtree: Iterable[int]) -> list[int]:
        """Makes the deleted item ``item_id`` and the items of ``subtree`` deleted with
        it active again; returns their ids, the item first. ``subtree`` items that are
        active again, or no longer hang below the item, are left as they are."""
        access = await self.access.current()
        caller = access.principal
        catalog = await self.config.catalog()
        async with self.outbox.transaction() as session:
            root = await first_or_missing(
                session, select(items).where(items.c.id == item_id), f"No item with id {item_id}."
            )
            access.require(Action.WRITE, root.project, f"item {item_id}")
            await tree.lock_project(session, root.project)
            root = (await session.execute(select(items).where(items.c.id == item_id))).one()
            if root.active:
                raise FailedPrecondition(
                    f"Item {item_id} is not deleted; only deleted items can be restored."
                )
            below = await _deleted_below(session, root, set(subtree))
            parent = await _active_parent(session, root)
            parent_id = parent.id if parent is not None else None
            parent_sequence = parent.sequence if parent is not None else None
            # Last among its new siblings first; then back to its old position.
            sort_order = await tree.next_sort_order(session, root.project, parent_id)
            sequence = tree.child_sequence(parent_sequence, sort_order)
            now = utcnow()
            changed = {
                "active": True,
                "version": items.c.version + 1,
                "modified_by": caller.user_id,
                "modified_at": now,
                "last_activity_at": now,
            }
            await session.execute(
                update(items)
                .where(items.c.id == root.id)
                .values(parent=parent_id, sort_order=sort_order, sequence=sequence, **changed)
            )
            for row in below:
                # Inactive items may share sequences with active ones (the deletion closed
                # the gap), so each row is rewritten by id, never by prefix.
                relative = row.sequence[len(root.sequence) :]
                await session.execute(
                    update(items)
                    .where(items.c.id == row.id)
                    .values(sequence=sequence + relative, **changed)
                )
            if parent_id == root.parent and root.sort_order < sort_order:
                peer = await _sibling_at(session, root, parent_id, root.sort_order - 1)
                await tree.place_after(
                    session, root.project, parent_id, parent_sequence, root.id, peer
                )
            await tree.renumber(session, root.project)
            restored = [root.id, *(row.id for row in below)]
            await tree.count_items(session, root.project, len(restored))
            for restored_id in restored:
                await self.outbox.add(
                    session, await item_event(session, RESTORED, restored_id, catalog, caller)
                )
            for event in await show_relationships_of(session, restored, caller):
                await self.outbox.add(session, event)
        return restored


async def _deleted_below(session: AsyncSession, root: Row[Any], wanted: set[int]) -> list[Row[Any]]:
    """The inactive items of ``wanted`` that hang below ``root`` through inactive items of
    ``wanted``, in tree order."""
    if not wanted:
        return []
    rows = (
        await session.execute(
            select(items).where(
                items.c.id.in_(sorted(wanted)),
                items.c.project == root.project,
                items.c.active.is_(False),
                items.c.sequence.startswith(root.sequence + "."),
            )
        )
    ).all()
    by_id = {row.id: row for row in rows}
    connected: dict[int | None, bool] = {root.id: True}

    def reaches_root(item_id: int | None) -> bool:
        if item_id not in connected:
            row = by_id.get(item_id) if item_id is not None else None
            connected[item_id] = row is not None and reaches_root(row.parent)
        return connected[item_id]

    below = [row for row in rows if reaches_root(row.id)]
    return sorted(below, key=lambda row: tree.sequence_key(row.sequence))


async def _active_parent(session: AsyncSession, root: Row[Any]) -> Row[Any] | None:
    """The item's old parent if it is still active, else None (the project's root)."""
    if root.parent is None:
        return None
    return (
        await session.execute(
            select(items).where(items.c.id == root.parent, items.c.active.is_(True))
        )
    ).first()


async def _sibling_at(
    session: AsyncSession, root: Row[Any], parent: int | None, position: int
) -> int | None:
    """The id of the active sibling of ``root`` at ``position`` (None before the first)."""
    if position < 0:
        return None
    where = (
        items.c.parent == parent
        if parent is not None
        else (items.c.project == root.project) & items.c.parent.is_(None)
    )
    return await session.scalar(
        select(items.c.id)
        .where(where, items.c.active.is_(True), items.c.id != root.id)
        .order_by(items.c.sort_order, items.c.id)
        .offset(position)
        .limit(1)
    )
