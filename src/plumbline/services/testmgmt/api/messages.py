"""Test records as wire messages: fields in the caller's date form, what they may do."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row

from plumbline.api.testmgmt.v1 import testmgmt_pb2 as pb
from plumbline.common.access import Access, AccessCache, Action
from plumbline.common.catalog import Catalog
from plumbline.common.dates import format_datetime
from plumbline.common.fields import show
from plumbline.common.records import Messages
from plumbline.common.snapshots import snapshot_payload
from plumbline.services.testmgmt import remote
from plumbline.services.testmgmt.generation import NOT_RUN
from plumbline.services.testmgmt.store import CYCLE, PLAN, RUN

KINDS: dict[str, pb.Kind.ValueType] = {PLAN: pb.PLAN, CYCLE: pb.CYCLE, RUN: pb.RUN}
KIND_NAMES: dict[int, str] = {int(value): name for name, value in KINDS.items()}


def kind_of(kind: int) -> str | None:
    """The store's kind for a request's ``Kind`` (None: any)."""
    return KIND_NAMES.get(kind)


def allowed(access: Access, row: Row[Any]) -> list[str]:
    """``resources.self.allowed``: a test runner may PUT a run, not delete it."""
    if row.locked and row.locked_by != access.principal.user_id:
        return ["GET"] if access.may(Action.READ, row.project) else []
    executes_only = not access.may(Action.WRITE, row.project) and access.may(
        Action.EXECUTE, row.project
    )
    if row.kind == RUN and executes_only:
        return ["GET", "PUT"]
    return access.allowed(row.project)


def record_message(
    row: Row[Any], catalog: Catalog, dates_with_time: bool, access: Access
) -> pb.TestRecord:
    """A records row as the wire record."""
    stored = json.loads(row.fields_json)
    fields: dict[str, Any] = {
        "documentKey": row.document_key,
        "globalId": row.global_id,
        **show(catalog.item_types.get(row.item_type), stored, dates_with_time),
    }
    message = pb.TestRecord(
        id=row.id,
        kind=KINDS[row.kind],
        document_key=row.document_key,
        global_id=row.global_id,
        project=row.project,
        item_type=row.item_type,
        created_date=format_datetime(row.created_at),
        modified_date=format_datetime(row.modified_at),
        last_activity_date=format_datetime(row.last_activity_at),
        created_by=row.created_by,
        modified_by=row.modified_by,
        allowed=allowed(access, row),
        lock=pb.Lock(
            locked=row.locked,
            last_locked_date=format_datetime(row.last_locked_at) if row.last_locked_at else "",
        ),
        archived=bool(row.archived),
        version=row.version,
    )
    if row.locked_by is not None:
        message.lock.locked_by = row.locked_by
    if row.kind == CYCLE:
        fields["testPlan"] = row.plan
        message.test_plan = row.plan
        message.generation_json = (row.generation_json or "{}").encode()
    if row.kind == RUN:
        fields["testRunStatus"] = row.status or NOT_RUN
        fields["testCase"] = row.test_case
        fields["testCycle"] = row.cycle
        fields["testPlan"] = row.plan
        message.test_case_version_number = row.test_case_version or 1
        message.test_plan = row.plan
        message.test_group = row.test_group or 0
        message.sort_order_from_test_group = row.sort_order or 0
    message.fields_json = json.dumps(fields).encode()
    return message


def snapshot(row: Row[Any], catalog: Catalog, access: Access) -> dict[str, Any]:
    """``snapshot`` and ``recordType`` of an event about ``row``, read after its change."""
    return snapshot_payload(record_message(row, catalog, False, access))


class RecordMessages(Messages[pb.TestRecord, pb.RecordPage]):
    """Renders records rows for one request; a run with its test case's current version
    number (one read of the test cases of all the runs)."""

    def __init__(self, items: remote.Items, access: AccessCache) -> None:
        super().__init__(items, access, record_message, pb.RecordPage)
        self.cases = items

    async def many(self, rows: Sequence[Row[Any]], dates_with_time: bool) -> list[pb.TestRecord]:
        listed = await super().many(rows, dates_with_time)
        runs = [
            (row, message) for row, message in zip(rows, listed, strict=True) if row.kind == RUN
        ]
        versions = await self.cases.current_versions([row.test_case for row, _ in runs])
        for row, message in runs:
            if row.test_case in versions:
                message.test_case_current_version_number = versions[row.test_case]
        return listed


def record_messages(items: remote.Items, access: AccessCache) -> RecordMessages:
    """The renderer of records rows."""
    return RecordMessages(items, access)
