"""What a change event carries for the history: the record as it is after the change.

Every event that gives an abstract item (item, test plan, test cycle, test run,
attachment) a new version has ``version`` = that version and, in its payload,
``snapshot`` (the owner's wire record in protobuf's JSON form, built as the owner's
servicer builds it, with dates in their default form and nothing that depends on who
asked) and ``recordType`` (the message's full name). A deletion carries
``deleted: true`` and no snapshot. The baselines service keeps these as the versions.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from sqlalchemy import ColumnElement, Table, select

from plumbline.api.core.v1 import core_pb2, core_pb2_grpc
from plumbline.common.access import Access, AccessCache
from plumbline.common.catalog import Catalog
from plumbline.common.context import require_admin
from plumbline.common.dates import format_datetime
from plumbline.common.db import Database
from plumbline.common.errors import NotFound
from plumbline.common.rpc import Context

#: The most snapshots one ``ListSnapshots`` call answers.
MAX_SNAPSHOTS = 1000

#: Members of a record message that describe the caller, not the record.
CALLER_MEMBERS = ("allowed",)


def snapshot_payload(record: Message) -> dict[str, Any]:
    """``snapshot`` and ``recordType`` of an event's payload for ``record``."""
    copy = type(record)()
    copy.CopyFrom(record)
    for name in CALLER_MEMBERS:
        if name in copy.DESCRIPTOR.fields_by_name:
            copy.ClearField(name)
    return {
        "snapshot": json_format.MessageToDict(copy),
        "recordType": copy.DESCRIPTOR.full_name,
    }


def snapshot_json(snapshot: dict[str, Any]) -> bytes:
    """A snapshot as the history stores and sends it."""
    return json.dumps(snapshot, separators=(",", ":")).encode()


def parse_snapshot(data: bytes | str, message: Message) -> Message:
    """Fills ``message`` (of the snapshot's record type) from a stored snapshot."""
    return json_format.Parse(data, message, ignore_unknown_fields=True)


class SnapshotsServicer(core_pb2_grpc.SnapshotsServicer):
    """``plumbline.core.v1.Snapshots``: one per process, answering for each owner of
    abstract items the process runs (``Runtime.serves_snapshots``)."""

    def __init__(self) -> None:
        self.owners: dict[str, OwnerSnapshots] = {}

    async def ListSnapshots(
        self, request: core_pb2.ListSnapshotsRequest, context: Context
    ) -> core_pb2.SnapshotPage:
        owner = self.owners.get(request.owner)
        if owner is None:
            raise NotFound(f"This process keeps no records of {request.owner!r}.")
        return await owner.page(request.after, request.limit)


class OwnerSnapshots:
    """One owner's records in id order, each built by ``render`` (the owner's wire record
    of a row, for a catalog and the caller's access) as the history keeps it.
    Organisation administrators only."""

    def __init__(
        self,
        db: Database,
        table: Table,
        catalog: Callable[[], Awaitable[Catalog]],
        render: Callable[[Any, Catalog, Access], Message],
        access: AccessCache,
        where: Sequence[ColumnElement[bool]] = (),
    ) -> None:
        self.db = db
        self.table = table
        self.catalog = catalog
        self.render = render
        self.access = access
        self.where = where

    async def page(self, after: int, limit: int) -> core_pb2.SnapshotPage:
        """Records with ids above ``after``, at most ``limit`` (or ``MAX_SNAPSHOTS``)."""
        require_admin("read every record for the history")
        limit = min(limit or MAX_SNAPSHOTS, MAX_SNAPSHOTS)
        table = self.table
        async with self.db.read() as session:
            rows = (
                await session.execute(
                    select(table)
                    .where(table.c.id > after, *self.where)
                    .order_by(table.c.id)
                    .limit(limit + 1)
                )
            ).all()
        catalog = await self.catalog()
        access = await self.access.current()
        page = core_pb2.SnapshotPage(more=len(rows) > limit)
        for row in rows[:limit]:
            payload = snapshot_payload(self.render(row, catalog, access))
            page.snapshots.append(
                core_pb2.Snapshot(
                    id=row.id,
                    version=row.version,
                    project=row.project,
                    record_type=payload["recordType"],
                    snapshot_json=snapshot_json(payload["snapshot"]),
                    modified_date=format_datetime(row.modified_at),
                    modified_by=row.modified_by,
                )
            )
        return page
