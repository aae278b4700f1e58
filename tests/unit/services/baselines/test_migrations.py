"""baselines' data migrations: versions recorded before ``0003t`` get the item type and
the test case read from their snapshots, and deleted histories a deletion time."""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from sqlalchemy import bindparam, select, text

from plumbline.common.dates import as_utc
from plumbline.common.db import Database
from plumbline.common.migrations import config_for, upgrade
from plumbline.services.baselines.indexed import ITEM, TEST_RECORD, indexed_columns
from plumbline.services.baselines.models import histories, versions


def _fields(**fields: object) -> str:
    return base64.b64encode(json.dumps(fields).encode()).decode()


SNAPSHOTS = {
    # (item, version): (record type, snapshot)
    (1, 1): (ITEM, {"id": "1", "itemType": "5", "fieldsJson": _fields(name="A")}),
    (1, 2): (ITEM, {"id": "1", "itemType": "5", "fieldsJson": _fields(name="B")}),
    (2, 1): (
        TEST_RECORD,
        {"id": "2", "kind": "RUN", "itemType": "9", "fieldsJson": _fields(testCase=42)},
    ),
    (3, 1): (TEST_RECORD, {"id": "3", "kind": "CYCLE", "itemType": "8"}),
    (4, 1): ("plumbline.attachments.v1.Attachment", {"id": "4", "fileName": "a.txt"}),
}


async def test_versions_recorded_before_get_their_type_and_test_case(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/baselines.db"
    await asyncio.to_thread(command.upgrade, config_for("baselines", url), "0002l")
    db = Database(url)
    try:
        # Written as the schema before 0003t has them (no item_type, test_case).
        add_version = text(
            "INSERT INTO versions (item, version, project, record_type, created_at, "
            "comment, snapshot) VALUES (:item, :version, 7, :record_type, :created_at, '', "
            ":snapshot)"
        ).bindparams(bindparam("created_at", type_=versions.c.created_at.type))
        add_history = text(
            "INSERT INTO histories (item, project, latest, deleted) "
            "VALUES (:item, 7, :latest, :deleted)"
        )
        async with db.transaction() as session:
            for (item, version), (record_type, snapshot) in SNAPSHOTS.items():
                await session.execute(
                    add_version,
                    {
                        "item": item,
                        "version": version,
                        "record_type": record_type,
                        "created_at": datetime(2024, 1, item, version, tzinfo=UTC),
                        "snapshot": json.dumps(snapshot),
                    },
                )
            for item, deleted in ((1, True), (2, False)):
                await session.execute(add_history, {"item": item, "latest": 1, "deleted": deleted})
        await upgrade("baselines", url)
        async with db.read() as session:
            found = {
                (r.item, r.version): (r.item_type, r.test_case)
                for r in await session.execute(select(versions))
            }
            kept = {
                r.item: (r.deleted, as_utc(r.deleted_at) if r.deleted_at else None)
                for r in await session.execute(select(histories))
            }
        assert found == {
            (1, 1): (5, None),
            (1, 2): (5, None),
            (2, 1): (9, 42),
            (3, 1): (8, None),
            (4, 1): (None, None),
        }
        # Deleted: its newest version's time, the earliest the deletion can have been.
        assert kept == {1: (True, datetime(2024, 1, 1, 2, tzinfo=UTC)), 2: (False, None)}
    finally:
        await db.close()


def test_indexed_columns_read_an_items_type_and_a_runs_test_case() -> None:
    for (record_type, snapshot), expected in zip(
        SNAPSHOTS.values(), [(5, None), (5, None), (9, 42), (8, None), (None, None)], strict=True
    ):
        assert indexed_columns(record_type, json.dumps(snapshot)) == expected
        assert indexed_columns(record_type, snapshot) == expected
    # A run whose fields are not JSON, or whose test case is not a number.
    assert indexed_columns(TEST_RECORD, {"kind": "RUN", "fieldsJson": "not base64!"}) == (
        None,
        None,
    )
    assert indexed_columns(TEST_RECORD, {"kind": "RUN", "fieldsJson": _fields(testCase="x")}) == (
        None,
        None,
    )
