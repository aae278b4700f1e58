"""Attachment records as wire messages: fields in the caller's date form, what the caller
may do with them."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Row

from plumbline.api.attachments.v1 import attachments_pb2 as pb
from plumbline.common.access import Access, AccessCache
from plumbline.common.catalog import Catalog
from plumbline.common.dates import format_datetime
from plumbline.common.fields import show
from plumbline.common.itemsclient import ItemsClient
from plumbline.common.records import Messages
from plumbline.common.rpc import message_of
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
    return message_of(
        row,
        pb.Attachment,
        created_date=format_datetime(row.created_at),
        modified_date=format_datetime(row.modified_at),
        last_activity_date=format_datetime(row.last_activity_at),
        fields_json=json.dumps(fields).encode(),
        allowed=["GET"] if locked_by_other else access.allowed(row.project),
        lock=pb.Lock(
            locked=row.locked,
            last_locked_date=format_datetime(row.last_locked_at) if row.last_locked_at else "",
            locked_by=row.locked_by,
        ),
    )


def snapshot(row: Row[Any], catalog: Catalog, access: Access) -> dict[str, Any]:
    """``snapshot`` and ``recordType`` of an event about ``row``, read after its change."""
    return snapshot_payload(message(row, catalog, False, access))


#: Renders attachments rows for one request.
AttachmentMessages = Messages[pb.Attachment, pb.AttachmentPage]


def messages(items: ItemsClient, access: AccessCache) -> AttachmentMessages:
    """The renderer of attachments rows."""
    return AttachmentMessages(items, access, message, pb.AttachmentPage)
