"""The events the items service writes for items (other records build theirs inline)."""

from __future__ import annotations

from typing import Any

from plumbline.common.catalog import ItemType
from plumbline.common.context import Principal
from plumbline.common.events import Event


def item_event(
    action: str,
    item_id: int,
    project: int,
    item_type: ItemType | None,
    actor: Principal,
    fields: dict[str, Any],
    version: int,
    document_key: str,
    comment: str = "",
) -> Event:
    """``items.item.<action>`` with what the activity feed and history need."""
    payload: dict[str, Any] = {
        "itemType": item_type.id if item_type else None,
        "name": fields.get("name", ""),
        "documentKey": document_key,
    }
    if comment:
        payload["comment"] = comment
    return Event(
        f"items.item.{action}",
        actor=actor.user_id,
        project=project,
        object_ids=[item_id],
        version=version,
        payload=payload,
    )
