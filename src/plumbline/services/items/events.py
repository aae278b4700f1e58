"""The events the items service writes for items (other records build theirs inline)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import String, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.catalog import Catalog
from plumbline.common.context import Principal
from plumbline.common.events import Event
from plumbline.common.snapshots import snapshot_payload
from plumbline.services.items.messages import item_message
from plumbline.services.items.models import item_categories, items

#: The item's categories as a comma list, for a statement that writes the item to return
#: (``returning(*items.c, CATEGORIES)``): the event then needs no read of its own.
CATEGORIES = (
    select(func.aggregate_strings(cast(item_categories.c.category, String), ","))
    .where(item_categories.c.item == items.c.id)
    .scalar_subquery()
    .label("categories")
)


async def item_event(
    session: AsyncSession,
    action: str,
    item_id: int,
    catalog: Catalog,
    actor: Principal,
    comment: str = "",
    row: Any = None,
    **extra: Any,
) -> Event:
    """``items.item.<action>`` with what the activity feed and the history need: the
    item as it is now, in this transaction, after the change (a new version).

    ``row`` is that item row when the caller has it already (an INSERT or UPDATE that
    returned it, with ``CATEGORIES`` too when it can); otherwise it is read.
    """
    if row is None:
        # With its categories in the same statement where the event lists them.
        wanted = (items,) if action in ("created", "deleted") else (items, CATEGORIES)
        row = (await session.execute(select(*wanted).where(items.c.id == item_id))).one()
    payload: dict[str, Any] = {
        "itemType": row.item_type,
        "name": row.name,
        "documentKey": row.document_key,
        **extra,
    }
    if comment:
        payload["comment"] = comment
    if action == "deleted":
        payload["deleted"] = True
    else:
        payload.update(snapshot_payload(item_message(row, catalog, False, None)))
        # The categories applied at this version (``/items/{id}/versioncategories``).
        payload["categories"] = await _categories(session, action, row)
    return Event(
        f"items.item.{action}",
        actor=actor.user_id,
        project=row.project,
        object_ids=[item_id],
        version=row.version,
        payload=payload,
    )


async def _categories(session: AsyncSession, action: str, row: Any) -> list[int]:
    if action == "created":
        return []  # a new item has none yet: creation (bulk ones too) reads nothing more
    mapping = row._mapping
    if "categories" in mapping:  # returned by the write (``CATEGORIES``)
        listed: str | None = mapping["categories"]
        return sorted(int(c) for c in listed.split(",")) if listed else []
    query = select(item_categories.c.category).where(item_categories.c.item == row.id)
    return sorted((await session.scalars(query)).all())
