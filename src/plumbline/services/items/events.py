"""The events the items service writes for items (other records build theirs inline)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.catalog import Catalog
from plumbline.common.context import Principal
from plumbline.common.events import Event
from plumbline.common.snapshots import snapshot_payload
from plumbline.services.items.messages import item_message
from plumbline.services.items.models import item_categories, items


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
    returned it); otherwise it is read.
    """
    if row is None:
        row = (await session.execute(select(items).where(items.c.id == item_id))).one()
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
        # The categories applied at this version (``/items/{id}/versioncategories``); a
        # new item has none yet, so creation (bulk ones too) reads nothing more.
        payload["categories"] = (
            []
            if action == "created"
            else sorted(
                (
                    await session.scalars(
                        select(item_categories.c.category).where(item_categories.c.item == item_id)
                    )
                ).all()
            )
        )
    return Event(
        f"items.item.{action}",
        actor=actor.user_id,
        project=row.project,
        object_ids=[item_id],
        version=row.version,
        payload=payload,
    )
