"""The transactional outbox and its relay.

A change and its event commit in one transaction (``Outbox.add``); the relay publishes
unsent rows in order, marks them sent, and retries until the bus takes them. Because
the bus drops a second publish of the same event id, a crash between publish and
mark-as-sent costs nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    func,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.api.core.v1 import core_pb2, core_pb2_grpc
from plumbline.common.bus import Bus
from plumbline.common.dates import utcnow
from plumbline.common.db import ID, Database
from plumbline.common.errors import NotFound
from plumbline.common.events import Event, position_marker
from plumbline.common.rpc import Context
from plumbline.common.steps import Steps
from plumbline.common.telemetry import current_traceparent

log = logging.getLogger(__name__)

#: Most events one relay transaction reads and publishes.
RELAY_BATCH = 200


def outbox_table(metadata: MetaData) -> Table:
    """The ``outbox`` table in a service's own metadata."""
    return Table(
        "outbox",
        metadata,
        Column("id", ID, primary_key=True, autoincrement=True),
        Column("event_id", String(36), nullable=False, unique=True),
        Column("body", Text, nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("published_at", DateTime(timezone=True), nullable=True, index=True),
    )


class Outbox:
    """Writes events with the change and relays them to the bus."""

    def __init__(self, db: Database, table: Table, service: str) -> None:
        self.db = db
        self.table = table
        self.service = service
        self.bus: Bus | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        # Built once: every write and every relay pass runs them.
        self._insert = table.insert()
        unsent = (
            select(table.c.id)
            .where(table.c.published_at.is_(None))
            .order_by(table.c.id)
            .limit(bindparam("batch", type_=Integer))
        )
        if not db.sqlite:
            unsent = unsent.with_for_update(skip_locked=True)
        # For a bus that keeps events: marked sent and read in one statement; should a
        # publish fail, the transaction rolls back and the rows are unsent again.
        self._take = (
            update(table)
            .where(table.c.id.in_(unsent))
            .values(published_at=bindparam("now"))
            .returning(table.c.id, table.c.body)
        )
        self._read = (
            select(table.c.id, table.c.body).where(table.c.id.in_(unsent)).order_by(table.c.id)
        )

    async def add(self, session: AsyncSession, event: Event) -> None:
        """Stores ``event`` in the caller's transaction."""
        await self.add_all(session, [event])

    async def add_all(self, session: AsyncSession, events: list[Event]) -> None:
        """Stores several events in the caller's transaction, in one statement."""
        if not events:
            return
        traceparent = current_traceparent()
        now = utcnow()
        rows = []
        for event in events:
            if event.traceparent is None:
                event = dataclasses.replace(event, traceparent=traceparent)
            rows.append({"event_id": event.id, "body": event.to_json().decode(), "created_at": now})
        await session.execute(self._insert, rows)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """``db.transaction()`` that wakes the relay once it has committed."""
        async with self.db.transaction() as session:
            yield session
        self._wake.set()

    async def watermark(self) -> int:
        """The position of the newest event written so far."""
        async with self.db.read() as session:
            value = await session.scalar(select(func.max(self.table.c.id)))
        return int(value or 0)

    def start(self, bus: Bus) -> None:
        """Starts relaying to ``bus``."""
        self.bus = bus
        self._steps = Steps()
        self._task = asyncio.create_task(self._run(), name=f"outbox-relay:{self.service}")

    async def stop(self, flush_timeout: float = 5.0) -> None:
        """Publishes what is pending (bounded by ``flush_timeout``), then stops."""
        if self._task is None:
            return
        self._wake.set()
        try:
            await asyncio.wait_for(self.flushed(), flush_timeout)
        except TimeoutError:
            log.warning("%s: outbox not empty at shutdown; it is sent on next start", self.service)
        await self._steps.stop(self._task)
        self._task = None

    async def flushed(self) -> None:
        """Returns when nothing is waiting to be relayed."""
        while True:
            if await self._pending() == 0:
                return
            self._wake.set()
            await asyncio.sleep(0.02)

    async def _pending(self) -> int:
        async with self.db.read() as session:
            count = await session.scalar(
                select(func.count()).where(self.table.c.published_at.is_(None))
            )
        return int(count or 0)

    async def _announce(self) -> None:
        """Tells every partition how far this outbox had been relayed before this start:
        partitions that get none of its later events still learn that they are caught up
        (a reader waits for every partition to have passed the watermark)."""
        assert self.bus is not None
        if self.bus.partitions <= 1:
            return
        async with self.db.read() as session:
            relayed = await session.scalar(
                select(func.max(self.table.c.id)).where(self.table.c.published_at.is_not(None))
            )
        if relayed:
            await self._mark(int(relayed))

    async def _mark(self, position: int) -> None:
        """Tells each partition (where there are several) that this outbox has been
        relayed up to ``position`` (``position_marker``, ``Inbox``)."""
        assert self.bus is not None
        if self.bus.partitions > 1:
            for partition in range(self.bus.partitions):
                await self.bus.publish(position_marker(self.service, position, partition))

    async def _run(self) -> None:
        backoff = 0.1
        try:
            await self._announce()
        except Exception as exc:  # the next batch's markers make up for it
            log.warning("%s: could not announce the relayed position (%s)", self.service, exc)
        while not self._steps.stopping:
            # Cleared before the read, not after it: a commit that lands while
            # ``relay_once`` runs sets it again and is relayed without waiting.
            self._wake.clear()
            try:
                async with self._steps.step():
                    sent = await self.relay_once()
                backoff = 0.1
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("%s: relay failed (%s); retrying in %.1fs", self.service, exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            if sent < RELAY_BATCH:
                # Everything committed before the read is sent; a commit since has set
                # the wake-up again. Reading once more now would find nothing.
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=1.0)
                except TimeoutError:
                    pass

    async def relay_once(self, batch: int = RELAY_BATCH) -> int:
        """Publishes up to ``batch`` unsent events in order; returns how many.

        They are marked sent once the bus has them for good: at once where it keeps
        events (NATS), else (the memory bus) once every durable consumer has handled
        them, so that a crash before then leaves them to be sent again at the next start.
        """
        assert self.bus is not None
        async with self.db.transaction() as session:
            if self.bus.keeps_events:
                # RETURNING has no order of its own: the ids give it back.
                rows = sorted(
                    (await session.execute(self._take, {"batch": batch, "now": utcnow()})).all(),
                    key=lambda row: int(row[0]),
                )
            else:
                rows = list((await session.execute(self._read, {"batch": batch})).all())
            if not rows:
                return 0
            for row_id, body in rows:
                event = dataclasses.replace(Event.from_json(body), position=row_id)
                await self.bus.publish(event)
            await self._mark(int(rows[-1][0]))  # each partition has everything up to here
            if self.bus.keeps_events:
                return len(rows)
        # Outside the transaction: the consumers may write to this database meanwhile.
        await self.bus.delivered()
        async with self.db.transaction() as session:
            await self._sent(session, [r[0] for r in rows])
        return len(rows)

    async def _sent(self, session: AsyncSession, ids: list[int]) -> None:
        await session.execute(
            update(self.table).where(self.table.c.id.in_(ids)).values(published_at=utcnow())
        )


class WatermarksServicer(core_pb2_grpc.WatermarksServicer):
    """``plumbline.core.v1.Watermarks``: how far each outbox of this process has got."""

    def __init__(self) -> None:
        self.outboxes: dict[str, Outbox] = {}

    async def GetWatermark(
        self, request: core_pb2.Watermark, context: Context
    ) -> core_pb2.Watermark:
        outbox = self.outboxes.get(request.source)
        if outbox is None:
            raise NotFound(f"This process writes no events of {request.source!r}.")
        return core_pb2.Watermark(source=request.source, position=await outbox.watermark())
