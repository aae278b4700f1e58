"""Reads and events shared by plans, cycles and runs."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common import records as shared
from plumbline.common.access import Access, AccessCache, Action
from plumbline.common.context import Principal
from plumbline.common.db import Database, chunked
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.testmgmt import remote
from plumbline.services.testmgmt.models import records

PLAN, CYCLE, RUN = "plan", "cycle", "run"
NOUNS = {PLAN: "test plan", CYCLE: "test cycle", RUN: "test run"}
#: Event entities and the activity feed's object types, by kind.
ENTITIES = {PLAN: "testplan", CYCLE: "testcycle", RUN: "testrun"}


class Domain:
    """What every resource family of testmgmt works with."""

    def __init__(
        self, db: Database, outbox: Outbox, items: remote.Items, access: AccessCache
    ) -> None:
        self.db = db
        self.outbox = outbox
        self.items = items
        self.access = access


def key_sort(key: str) -> str:
    """``key`` in natural order: ``P-TSTRN-9`` before ``P-TSTRN-10``."""
    prefix, _, number = key.rpartition("-")
    return f"{prefix}-{int(number):012d}" if number.isdigit() else key


def new_record(
    record_id: int,
    kind: str,
    project: int,
    item_type: int,
    key: str,
    type_key: str,
    fields: dict[str, Any],
    caller: Principal,
    now: datetime,
) -> dict[str, Any]:
    """The insert values every new record has; the caller adds its kind's own."""
    return {
        "id": record_id,
        "kind": kind,
        "project": project,
        "item_type": item_type,
        "document_key": key,
        "key_sort": key_sort(key),
        "global_id": f"GID-{type_key}-{record_id}",
        "fields_json": json.dumps(fields),
        "name": str(fields.get("name", ""))[:255],
        "archived": False,
        "locked": False,
        "version": 1,
        "created_by": caller.user_id,
        "modified_by": caller.user_id,
        "created_at": now,
        "modified_at": now,
        "last_activity_at": now,
    }


async def load(
    session: AsyncSession,
    record_id: int,
    kind: str,
    access: Access,
    action: Action = Action.READ,
    *,
    for_update: bool = False,
) -> Row[Any]:
    """One record of ``kind`` the caller may ``action``, or NotFound / PermissionDenied."""
    return await shared.load(
        session,
        records,
        record_id,
        NOUNS[kind],
        access,
        action,
        for_update=for_update,
        where=[records.c.kind == kind],
    )


async def rows_by_id(session: AsyncSession, ids: list[int]) -> dict[int, Row[Any]]:
    """Records by id as they stand in the transaction: one read after a batch write
    (in chunks that keep large batches within the bind-parameter limits)."""
    found: dict[int, Row[Any]] = {}
    for chunk in chunked(list(dict.fromkeys(ids))):
        rows = (await session.execute(select(records).where(records.c.id.in_(chunk)))).all()
        found.update((r.id, r) for r in rows)
    return found


def check_lock(row: Any, caller: Principal) -> None:
    """A record locked by someone else is theirs to change."""
    shared.check_lock(row, caller, NOUNS[row.kind])


async def touch(
    session: AsyncSession, row: Row[Any], caller: Principal, now: datetime, **values: Any
) -> int:
    """Writes ``values`` with the change's system members; the new version number."""
    return await shared.touch(session, records, row, caller, now, **values)


def record_event(
    action: str,
    kind: str,
    record_id: int,
    project: int,
    actor: Principal,
    version: int,
    payload: dict[str, Any],
) -> Event:
    """``testmgmt.<testplan|testcycle|testrun>.<action>`` with what the feed shows; a
    deletion says so in its payload (``deleted``), for the history."""
    if action == "deleted":
        payload = {**payload, "deleted": True}
    return Event(
        f"testmgmt.{ENTITIES[kind]}.{action}",
        actor=actor.user_id,
        project=project,
        object_ids=[record_id],
        version=version,
        payload=payload,
    )


def summary(row: Row[Any], fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """The payload members every record event carries."""
    shown = json.loads(row.fields_json) if fields is None else fields
    return {
        "itemType": row.item_type,
        "name": shown.get("name", ""),
        "documentKey": row.document_key,
    }
