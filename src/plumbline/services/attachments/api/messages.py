"""Attachment records as wire messages: fields in the caller's date form, what the caller
may do with them."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Row

from plumbline.api.attachments.v1 import attachments_pb2 as pb
from plumbline.api.core.v1 import core_pb2
from plumbline.common.access import Access, AccessCache
from plumbline.common.catalog import Catalog
from plumbline.common.dates import format_datetime
from plumbline.common.fields import show
from plumbline.common.itemsclient import ItemsClient
from plumbline.common.snapshots import snapshot_payload


def message(
    row: Row[Any], catalog: Catalog, dates_with_time: bool, access: Access
) -> pb.Attachment:
    """An attachments row as the wire record."""
    fields: dict[str, Any] = {
        "documentKey": row.document_key,
        "globalId": row.global_id,
        **show(catalog.item_types.get(row.item_type), json.loads(row.fields_json), dates_with_time),
    }
    locked_by_other = row.locked and row.locked_by != access.principal.user_id
    result = pb.Attachment(
        id=row.id,
        document_key=row.document_key,
        global_id=row.global_id,
        project=row.project,
        item_type=row.item_type,
        created_date=format_datetime(row.created_at),
        modified_date=format_datetime(row.modified_at),
        last_activity_date=format_datetime(row.last_activity_at),
        created_by=row.created_by,
        modified_by=row.modified_by,
        fields_json=json.dumps(fields).encode(),
        allowed=["GET"] if locked_by_other else access.allowed(row.project),
        lock=pb.Lock(
            locked=row.locked,
            last_locked_date=format_datetime(row.last_locked_at) if row.last_locked_at else "",
        ),
        file_name=row.file_name,
        mime_type=row.mime_type,
        file_size=row.file_size,
        sha256=row.sha256,
        version=row.version,
    )
    if row.locked_by is not None:
        result.lock.locked_by = row.locked_by
    return result


def snapshot(row: Row[Any], catalog: Catalog, access: Access) -> dict[str, Any]:
    """``snapshot`` and ``recordType`` of an event about ``row``, read after its change."""
    return snapshot_payload(message(row, catalog, False, access))


class Messages:
    """Renders rows for one request (one configuration read, one access lookup)."""

    def __init__(self, items: ItemsClient, access: AccessCache) -> None:
        self.items = items
        self.access = access

    async def many(self, rows: list[Row[Any]], dates_with_time: bool) -> list[pb.Attachment]:
        """Every row as a message, in order."""
        catalog = await self.items.catalog()
        access = await self.access.current()
        return [message(r, catalog, dates_with_time, access) for r in rows]

    async def page(
        self, rows: list[Row[Any]], start: int, total: int, dates_with_time: bool
    ) -> pb.AttachmentPage:
        """A page of attachments."""
        return pb.AttachmentPage(
            attachments=await self.many(rows, dates_with_time),
            page_info=core_pb2.PageInfo(
                start_index=start, result_count=len(rows), total_results=total
            ),
        )
