"""The consumer side: each event is applied once, and readers can wait for it.

A consumer records the event id (unique) in the same transaction as its effect, so a
redelivered event is a no-op; it also records the newest position seen per source so
that a read can wait until it has caught up with a write (read-your-writes).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Column, DateTime, MetaData, String, Table, TextClause, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.api.core.v1 import core_pb2
from plumbline.common.dates import utcnow
from plumbline.common.db import ID, IN_CHUNK, Database, affected, chunked, inserted_keys
from plumbline.common.errors import Unavailable
from plumbline.common.events import Event
from plumbline.common.leases import LeaseLost, Leases


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


#: What a reader waits for, by source: one position (every partition must reach it) or
#: one per partition (``Watermark.partitions``).
Targets = Mapping[str, int | Sequence[int]]


def targets(watermarks: Iterable[core_pb2.Watermark]) -> dict[str, int | Sequence[int]]:
    """The targets a request's ``wait_for`` names (``Inbox.wait_for``)."""
    return {w.source: list(w.partitions) if w.partitions else w.position for w in watermarks}


class Inbox:
    """Idempotent consumption and caught-up waits.

    A consumer whose replicas share partitions of the events (``leases``) keeps a
    position per source and partition (``items/3``): a partition reaches a watermark when
    it has consumed the relay's position marker for it, and a reader waits for every
    partition. Each batch is applied only while this replica holds its partition.
    """

    def __init__(
        self,
        db: Database,
        consumed: Table,
        positions: Table,
        leases: Leases | None = None,
    ) -> None:
        self.db = db
        self.consumed = consumed
        self.positions = positions
        self.leases = leases
        self.partitions = leases.count if leases is not None else 1
        self._known: dict[str, int] = {}
        self._changed = asyncio.Condition()

    def _key(self, event: Event) -> str:
        """Where the position ``event`` advances is kept."""
        if self.partitions <= 1:
            return event.source
        return f"{event.source}/{event.partition(self.partitions)}"

    async def claim(self, session: AsyncSession, event: Event) -> bool:
        """Records ``event`` as consumed; False when it was already consumed."""
        return bool(await self.claim_many(session, [event]))

    async def claim_many(self, session: AsyncSession, events: Sequence[Event]) -> list[Event]:
        """Records ``events`` as consumed; those not consumed before, in their order (an
        event given twice counts once).

        One ``INSERT ... ON CONFLICT DO NOTHING`` decides for the whole batch
        (``inserted_keys``), on both databases: no read before it, and no savepoint on
        PostgreSQL (on SQLite a savepoint would open the driver's transaction early and
        its release would commit the claim on its own). Each source's position then moves
        once, to the highest position claimed from it. The feed consumes every event, so
        each statement saved here counts.

        Position markers are not claimed (nothing records them) but move their partition's
        position; the batch (one partition's, when partitioned) is applied only while this
        replica holds that partition (``Leases.hold``), checked first. On PostgreSQL the
        three are one statement (``_claim_in_one``).
        """
        if not self.db.sqlite:
            return await self._claim_in_one(session, events)
        if self.leases is not None and events:
            await self.leases.hold(session, events[0].partition(self.partitions))
        given: dict[str, Event] = {}
        markers: list[Event] = []
        for event in events:
            if event.is_marker:
                markers.append(event)
            else:
                given.setdefault(event.id, event)
        if not given and not markers:
            return []
        now = utcnow()
        claimed_ids: set[tuple[Any, ...]] = set()
        # Sorted: concurrent batches take the unique index's locks in one order.
        for ids in chunked(sorted(given), IN_CHUNK // 2):
            claimed_ids |= await inserted_keys(
                session,
                self.db.insert_ignoring_duplicates(self.consumed),
                [{"event_id": event_id, "consumed_at": now} for event_id in ids],
                ["event_id"],
            )
        claimed = [event for event in given.values() if (event.id,) in claimed_ids]
        newest: dict[str, int] = {}
        for event in [*claimed, *markers]:
            key = self._key(event)
            newest[key] = max(newest.get(key, event.position), event.position)
        for source in sorted(newest):  # one lock order for concurrent batches
            await self._advance(session, source, newest[source])
        return claimed

    async def _claim_in_one(self, session: AsyncSession, events: Sequence[Event]) -> list[Event]:
        """``claim_many`` on PostgreSQL, in one statement: the lease checked (and its row
        locked), the events recorded and the positions moved, in one round trip instead
        of three. A consumer's statements are most of its CPU and the round trips a
        good part of them (every event is consumed three times; at a steady write rate
        each batch holds one event).

        The positions move to the highest position given from each source, consumed
        before or not: one consumed before moved it already, and it never moves back.
        """
        if not events:
            return []
        fence, lease_table = None, None
        if self.leases is not None:
            fence = self.leases.fence(events[0].partition(self.partitions))
            lease_table = None if fence is None else self.leases.leases.name
        given: dict[str, Event] = {}
        newest: dict[str, int] = {}
        for event in events:
            if not event.is_marker:
                given.setdefault(event.id, event)
            key = self._key(event)
            newest[key] = max(newest.get(key, event.position), event.position)
        statement = _claim_statement(self.consumed.name, self.positions.name, lease_table)
        sources = sorted(newest)  # one lock order for concurrent batches
        params: dict[str, Any] = {
            "now": utcnow(),
            # Sorted: concurrent batches take the unique index's locks in one order.
            "ids": sorted(given),
            "sources": sources,
            "positions": [newest[source] for source in sources],
            **(fence or {}),
        }
        held, claimed_ids = (await session.execute(statement, params)).one()
        if not held:
            assert fence is not None
            raise LeaseLost(f"{fence['consumer']}: partition {fence['partition']} was taken over")
        claimed = set(claimed_ids)
        return [event for event in given.values() if event.id in claimed]

    async def _advance(self, session: AsyncSession, source: str, position: int) -> None:
        """Moves the source's position forward to ``position``, never back."""
        moved = await affected(
            session,
            self.positions.update()
            .where(self.positions.c.source == source, self.positions.c.position < position)
            .values(position=position),
        )
        if moved == 0:
            # The first event of this source, or an older one arriving late: a no-op then.
            await session.execute(
                self.db.insert_ignoring_duplicates(self.positions).values(
                    source=source, position=position
                )
            )

    async def committed(self, event: Event) -> None:
        """Call after the consuming transaction committed: wakes waiting readers."""
        await self.committed_many([event])

    async def committed_many(self, events: Sequence[Event]) -> None:
        """``committed`` for the events of one transaction (those given to
        ``claim_many``, markers and events consumed before included): wakes waiting
        readers once."""
        for event in events:
            key = self._key(event)
            if event.position > self._known.get(key, 0):
                self._known[key] = event.position
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

    async def caught_up(self, targets: Targets, timeout: float, reader: str) -> None:
        """Read-your-writes for a reader built from the events (``reader``: "The history"):
        waits as ``wait_for`` does, and answers 503 (try again) when the time is up."""
        if targets and not await self.wait_for(targets, timeout):
            raise Unavailable(f"{reader} is catching up with recent changes; try again shortly.")

    async def wait_for(self, targets: Targets, timeout: float) -> bool:
        """Waits until every source reached its position, in every partition (where the
        target is one position) or in each partition its own (where it is a position per
        partition, ``targets``); False on time-out."""
        deadline = time.monotonic() + timeout
        for source, wanted in self._each_partition(targets).items():
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

    def _each_partition(self, targets: Targets) -> dict[str, int]:
        """``targets`` by the keys positions are kept under (``_key``). A position per
        partition counts only where the writer's partitions are this consumer's; else its
        highest is wanted of every partition."""
        if self.partitions <= 1:
            return {
                source: wanted if isinstance(wanted, int) else max(wanted, default=0)
                for source, wanted in targets.items()
            }
        keyed: dict[str, int] = {}
        for source, wanted in targets.items():
            if isinstance(wanted, int):
                each = [wanted] * self.partitions
            elif len(wanted) == self.partitions:
                each = list(wanted)
            else:
                each = [max(wanted, default=0)] * self.partitions
            for partition, position in enumerate(each):
                if position > 0:
                    keyed[f"{source}/{partition}"] = position
        return keyed


@functools.cache
def _claim_statement(consumed: str, positions: str, leases: str | None) -> TextClause:
    """The one statement of ``Inbox._claim_in_one`` (with the lease's check when
    ``leases`` names its table). Data-modifying CTEs run whether or not they are read;
    each writes only if the lease is held, so a replica that lost it writes nothing."""
    if leases is None:
        lease, gate, held = "", "", "1"
    else:
        lease = (
            f"lease AS (UPDATE {leases} SET holder = :holder WHERE consumer = :consumer "
            "AND partition = :partition AND holder = :holder "
            "AND expires_at > CAST(:now AS timestamptz) RETURNING 1), "
        )
        gate = " WHERE EXISTS (SELECT 1 FROM lease)"
        held = "(SELECT count(*) FROM lease)"
    return text(
        f"WITH {lease}"
        f"claimed AS (INSERT INTO {consumed} (event_id, consumed_at) "
        f"SELECT e, CAST(:now AS timestamptz) FROM unnest(CAST(:ids AS varchar[])) AS e{gate} "
        "ON CONFLICT DO NOTHING RETURNING event_id), "
        f"advanced AS (INSERT INTO {positions} (source, position) "
        "SELECT s, p FROM unnest(CAST(:sources AS varchar[]), CAST(:positions AS bigint[])) "
        f"AS t(s, p){gate} "
        f"ON CONFLICT (source) DO UPDATE SET position = excluded.position "
        f"WHERE {positions}.position < excluded.position) "
        f"SELECT {held} AS held, ARRAY(SELECT event_id FROM claimed) AS claimed"
    )
