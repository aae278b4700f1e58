"""Items rows as wire records."""

from __future__ import annotations

import json
from typing import Any

from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.common.access import Access
from plumbline.common.catalog import Catalog
from plumbline.common.dates import format_datetime
from plumbline.common.fields import show
from plumbline.common.rpc import shared_names
from plumbline.services.items.models import items

# What an items row and the Item message both have, under the same names (id, project,
# item_type, child_item_type, document_key, global_id, created_by, modified_by, version).
_COLUMNS = shared_names(pb.Item, items.c.keys())


def item_message(
    row: Any, catalog: Catalog, dates_with_time: bool, access: Access | None
) -> pb.Item:
    """An items row as the wire record (fields in the caller's date form); with no
    ``access``, as the history keeps it (nothing that depends on who asks)."""
    item_type = catalog.item_types.get(row.item_type)
    stored = json.loads(row.fields_json)
    fields = {
        "documentKey": row.document_key,
        "globalId": row.global_id,
        **show(item_type, stored, dates_with_time),
    }
    message = pb.Item(
        **{name: getattr(row, name) for name in _COLUMNS},
        created_date=format_datetime(row.created_at),
        modified_date=format_datetime(row.modified_at),
        last_activity_date=format_datetime(row.last_activity_at),
        fields_json=json.dumps(fields).encode(),
        location=pb.ItemLocation(
            sort_order=row.sort_order,
            global_sort_order=row.global_sort_order,
            sequence=row.sequence,
            project=row.project,
        ),
        lock=pb.ItemLock(
            locked=row.locked,
            last_locked_date=format_datetime(row.last_locked_date) if row.last_locked_date else "",
        ),
    )
    if access is not None:
        locked_by_other = row.locked and row.locked_by != access.principal.user_id
        message.allowed.extend(["GET"] if locked_by_other else access.allowed(row.project))
    if row.parent is not None:
        message.location.parent_item = row.parent
    if row.locked_by is not None:
        message.lock.locked_by = row.locked_by
    return message
