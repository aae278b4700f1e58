"""The consumer side: each event is applied once, and readers can wait for it.

A consumer records the event id (unique) in the same transaction as its effect, so a
redelivered event is a no-op; it also records the newest position seen per source so
that a read can wait until it has caught up with a write (read-your-writes).
"""

from __future__ import annotations

import asyncio
import time

from sqlalchemy import Column, DateTime, MetaData, String, Table, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.dates import utcnow
from plumbline.common.db import ID, Database, unique_violation
from plumbline.common.events import Event


def inbox_tables(metadata: MetaData) -> tuple[Table, Table]:
    """``consumed_events`` and ``consumer_positions`` in a service's metadata."""
    consumed = Table(
        "consumed_events",
        metadata,
        Column("event_id", String(36), primary_key=True),
        Column("consumed_at", DateTime(timezone=True), nullable=False),
    )
    positions = Table(
        "consumer_positions",
        metadata,
        Column("source", String(64), primary_key=True),
        Column("position", ID, nullable=False),
    )
    return consumed, positions


class Inbox:
    """Idempotent consumption and caught-up waits."""

    def __init__(self, db: Database, consumed: Table, positions: Table) -> None:
        self.db = db
        self.consumed = consumed
        self.positions = positions
        self._known: dict[str, int] = {}
        self._changed = asyncio.Condition()

    async def claim(self, session: AsyncSession, event: Event) -> bool:
        """Records ``event`` as consumed; False when it was already consumed."""
        exists = await session.scalar(
            select(self.consumed.c.event_id).where(self.consumed.c.event_id == event.id)
        )
        if exists is not None:
            return False
        insert = self.consumed.insert().values(event_id=event.id, consumed_at=utcnow())
        if self.db.sqlite:
            # No savepoint here: the SQLite driver starts its transaction only at the
            # first write, so a savepoint would open it and releasing the savepoint would
            # commit the claim on its own (a failed effect would then lose the event).
            # Writers are serialised on SQLite, so the check above cannot race.
            await session.execute(insert)
        else:
            try:
                async with session.begin_nested():
                    await session.execute(insert)
            except IntegrityError as exc:
                if unique_violation(exc):
                    return False
                raise
        await self._advance(session, event)
        return True

    async def _advance(self, session: AsyncSession, event: Event) -> None:
        current = await session.scalar(
            select(self.positions.c.position).where(self.positions.c.source == event.source)
        )
        if current is None:
            await session.execute(
                self.positions.insert().values(source=event.source, position=event.position)
            )
        elif event.position > current:
            await session.execute(
                self.positions.update()
                .where(self.positions.c.source == event.source)
                .values(position=event.position)
            )

    async def committed(self, event: Event) -> None:
        """Call after the consuming transaction committed: wakes waiting readers."""
        if event.position > self._known.get(event.source, 0):
            self._known[event.source] = event.position
        async with self._changed:
            self._changed.notify_all()

    async def position(self, source: str) -> int:
        """The newest position consumed from ``source`` (any replica's)."""
        async with self.db.read() as session:
            value = await session.scalar(
                select(self.positions.c.position).where(self.positions.c.source == source)
            )
        position = int(value or 0)
        self._known[source] = max(self._known.get(source, 0), position)
        return self._known[source]

    async def wait_for(self, targets: dict[str, int], timeout: float) -> bool:
        """Waits until every source reached its position; False on time-out."""
        deadline = time.monotonic() + timeout
        for source, wanted in targets.items():
            while self._known.get(source, 0) < wanted:
                if await self.position(source) >= wanted:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                async with self._changed:
                    try:
                        await asyncio.wait_for(self._changed.wait(), min(remaining, 0.05))
                    except TimeoutError:
                        pass
        return True
