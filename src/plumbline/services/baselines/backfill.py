"""The history's start on existing data: the first time the service runs, every record
of every owner that has no history yet gets its current state recorded as the version
its owner reports (later changes then arrive as events)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

import grpc
from grpc import aio
from sqlalchemy import select

from plumbline.api.core.v1 import core_pb2, core_pb2_grpc
from plumbline.common.context import SYSTEM, principal_var
from plumbline.common.dates import utcnow
from plumbline.common.db import Database
from plumbline.services.baselines.history import History
from plumbline.services.baselines.models import backfills

log = logging.getLogger(__name__)

#: Records asked for per call.
PAGE = 500


async def backfill(
    db: Database, history: History, owners: Mapping[str, Callable[[], aio.Channel]]
) -> None:
    """Records each owner's records without history, once per owner; retries until
    each owner answers."""
    token = principal_var.set(SYSTEM)
    try:
        for owner, channel in owners.items():
            delay = 0.5
            while True:
                try:
                    await _owner(db, history, owner, channel)
                    break
                except grpc.aio.AioRpcError as exc:
                    log.warning("cannot read %s's records for the history yet: %s", owner, exc)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 10.0)
    finally:
        principal_var.reset(token)


async def _owner(
    db: Database, history: History, owner: str, channel: Callable[[], aio.Channel]
) -> None:
    async with db.read() as session:
        if await session.scalar(select(backfills.c.owner).where(backfills.c.owner == owner)):
            return
    after, recorded = 0, 0
    while True:
        page = await core_pb2_grpc.SnapshotsStub(channel()).ListSnapshots(
            core_pb2.ListSnapshotsRequest(after=after, limit=PAGE, owner=owner)
        )
        recorded += await history.record_snapshots(list(page.snapshots))
        if not page.more or not page.snapshots:
            break
        after = page.snapshots[-1].id
    async with db.transaction() as session:
        await session.execute(
            db.insert_ignoring_duplicates(backfills).values(owner=owner, finished_at=utcnow())
        )
    if recorded:
        log.info("recorded the current version of %d %s records without history", recorded, owner)
