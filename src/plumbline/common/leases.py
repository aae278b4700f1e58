"""A consumer's partitions shared among its replicas, each consumed by one at a time.

The activity feed and the history consume every change. One process each stops keeping
up at a few hundred writes a second, so they run as replicas, and the bus splits events
into partitions by project (``Event.partition``). A partition must be consumed by one
replica at a time: two would take turns fetching its batches and could commit them out of
order. Each replica therefore holds a lease on the partitions it consumes, in the
consumer's own database:

- every replica renews its membership (``consumer_members``) and its leases
  (``consumer_leases``) every quarter of the lease time;
- each holds its fair share, ceil(partitions / live replicas): one with more lets the
  extra go (its subscription stopped first), one with fewer takes free or expired ones;
- a replica stops consuming a partition well before its lease can expire (``SAFETY``
  before, by its own clock), and another takes it only after it has expired, so two
  never consume one partition at once while the replicas' clocks agree to within a
  couple of seconds;
- the consuming transaction itself checks the lease (``hold``): a replica that stalled
  past its lease (a long pause, a lost database) commits nothing, and on PostgreSQL the
  check locks the lease row, so a taker waits for a transaction in flight to end.

A replica that dies loses its partitions when its leases expire; one that stops lets them
go at once. The partition's durable consumer on the bus starts its next holder again from
the first event not acknowledged (``NatsBus._resume_in_order``), and the consumer's inbox
drops what was applied already.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from prometheus_client import Gauge
from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    delete,
    func,
    select,
)
from sqlalchemy import update as sql_update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.api.core.v1 import core_pb2, core_pb2_grpc
from plumbline.common.bus import BatchHandler, Bus, Subscription
from plumbline.common.context import require_admin
from plumbline.common.dates import format_datetime, utcnow
from plumbline.common.db import Database, affected
from plumbline.common.errors import NotFound, Unavailable
from plumbline.common.rpc import Context
from plumbline.common.steps import Steps

log = logging.getLogger(__name__)

BEHIND_EVENTS = Gauge(
    "plumbline_consumer_behind_events",
    "Events published to a consumer's partition held here and not yet applied",
    ["consumer", "partition"],
)
BEHIND_SECONDS = Gauge(
    "plumbline_consumer_behind_seconds",
    "Age of the oldest event of a consumer's partition held here not yet applied",
    ["consumer", "partition"],
)


def lease_tables(metadata: MetaData) -> tuple[Table, Table]:
    """``consumer_leases`` and ``consumer_members`` in a consumer's metadata."""
    leases = Table(
        "consumer_leases",
        metadata,
        Column("consumer", String(64), primary_key=True),
        Column("partition", Integer, primary_key=True, autoincrement=False),
        Column("holder", String(96), nullable=False),
        Column("expires_at", DateTime(timezone=True), nullable=False),
        # How far behind the holder was at its last renewal (``Leases.lag``).
        Column("behind_events", BigInteger, nullable=False, server_default="0"),
        Column("behind_seconds", Float, nullable=False, server_default="0"),
        Column("reported_at", DateTime(timezone=True), nullable=True),
    )
    members = Table(
        "consumer_members",
        metadata,
        Column("consumer", String(64), primary_key=True),
        Column("holder", String(96), primary_key=True),
        Column("expires_at", DateTime(timezone=True), nullable=False),
    )
    return leases, members


class LeaseLost(Unavailable):
    """This replica no longer holds the partition it was consuming."""


@dataclass(frozen=True)
class Consumer:
    """One subscription a partition's holder runs: ``pattern`` (narrowed to the
    partition by the bus) into ``handler``, from the durable consumer ``durable``."""

    pattern: str
    durable: str
    handler: BatchHandler


@dataclass(frozen=True)
class PartitionLag:
    """How far one partition of a consumer is behind, and who holds it ("" for none)."""

    consumer: str
    partition: int
    holder: str
    events_behind: int
    seconds_behind: float
    reported_at: datetime | None


class Leases:
    """This replica's share of ``consumer``'s ``count`` partitions."""

    def __init__(
        self,
        db: Database,
        tables: tuple[Table, Table],
        consumer: str,
        count: int,
        ttl: float = 10.0,
        holder: str | None = None,
    ) -> None:
        self.db = db
        self.leases, self.members = tables
        self.consumer = consumer
        self.count = count
        self.ttl = ttl
        self.holder = holder or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        #: Held partitions, each with the moment (``time.monotonic``) to stop consuming
        #: it by unless renewed.
        self.held: dict[int, float] = {}
        self._subscriptions: dict[int, list[Subscription]] = {}
        self._bus: Bus | None = None
        self._consumers: Sequence[Consumer] = ()
        self._steps = Steps()
        self._task: asyncio.Task[None] | None = None
        self._alone = False

    @property
    def safety(self) -> float:
        """How long before its lease can expire a replica stops consuming a partition."""
        return max(1.5, self.ttl * 0.4)

    def holds(self, partition: int) -> bool:
        """Whether this replica consumes ``partition`` now (work keyed to the consumer's
        partitions, such as webhook deliveries, follows the same shares)."""
        return self.held.get(partition, 0.0) >= time.monotonic()

    def fence(self, partition: int) -> dict[str, Any] | None:
        """What a consuming statement checks to apply a batch of ``partition`` only while
        this replica holds it (the lease row's key and holder; None when alone, with
        nothing to check): ``hold`` in a statement of its own, or the inbox's claim in
        one with it. ``LeaseLost`` at once when the lease ran out here."""
        if self._alone:
            return None
        if self.held.get(partition, 0.0) < time.monotonic():
            raise LeaseLost(f"{self.consumer}: partition {partition} is no longer held here")
        return {"consumer": self.consumer, "partition": partition, "holder": self.holder}

    async def hold(self, session: AsyncSession, partition: int) -> None:
        """In a consuming transaction: raises ``LeaseLost`` unless this replica still
        holds ``partition`` (the lease row stays locked until the transaction ends)."""
        if self.fence(partition) is None:
            return
        c = self.leases.c
        kept = await affected(
            session,
            sql_update(self.leases)
            .where(
                c.consumer == self.consumer,
                c.partition == partition,
                c.holder == self.holder,
                c.expires_at > utcnow(),
            )
            .values(holder=self.holder),
        )
        if not kept:
            raise LeaseLost(f"{self.consumer}: partition {partition} was taken over")

    async def start(self, bus: Bus, consumers: Sequence[Consumer]) -> None:
        """Joins the replicas and consumes this replica's share, balancing it every
        quarter of the lease time. The first share is taken before this returns."""
        self._bus = bus
        self._consumers = consumers
        if not bus.keeps_events:
            # A memory bus lives in one process, the only replica: it consumes every
            # partition, with no leases to write or check.
            self._alone = True
            await self._follow(list(range(self.count)), math.inf)
            return
        try:
            await self.balance()
        except Exception as exc:
            log.warning("%s: could not take partitions yet (%s); retrying", self.consumer, exc)
        self._task = asyncio.create_task(self._run(), name=f"leases:{self.consumer}")

    async def _run(self) -> None:
        while not self._steps.stopping:
            await asyncio.sleep(self.ttl / 4)
            try:
                async with self._steps.step():
                    await self.balance()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("%s: could not renew partitions (%s)", self.consumer, exc)
                await self._stop_overdue()

    async def balance(self) -> None:
        """Renews this replica's leases, then lets go of or takes partitions until it
        holds its fair share."""
        started = time.monotonic()
        now = utcnow()
        expires = now + timedelta(seconds=self.ttl)
        async with self.db.transaction() as session:
            alive = await self._renew_membership(session, now, expires)
            lc = self.leases.c
            await session.execute(
                sql_update(self.leases)
                .where(lc.consumer == self.consumer, lc.holder == self.holder, lc.expires_at > now)
                .values(expires_at=expires)
            )
            await self._report(session, now)
            # Every lease of the consumer, and which are this replica's (renewed just now).
            ours = (lc.holder == self.holder) & (lc.expires_at > now)
            rows = await session.execute(
                select(lc.partition, ours.label("ours")).where(lc.consumer == self.consumer)
            )
            leased = {int(r.partition): bool(r.ours) for r in rows}
            mine = sorted(p for p, is_ours in leased.items() if is_ours)
            fair = math.ceil(self.count / max(alive, 1))
            extra = mine[fair:]
            for partition in range(self.count):
                if len(mine) >= fair:
                    break
                if partition in mine:
                    continue
                if await self._take(session, partition, partition in leased, now, expires):
                    mine.append(partition)
        await self._follow(sorted(mine), started + self.ttl - self.safety)
        for partition in extra:
            await self._release(partition)

    def lag(self) -> dict[int, tuple[int, float]]:
        """Each partition consumed here: the events behind (its subscriptions' together)
        and the seconds behind (the most of theirs)."""
        return {
            partition: (
                sum(s.behind_events for s in subscriptions),
                max((s.behind_seconds for s in subscriptions), default=0.0),
            )
            for partition, subscriptions in self._subscriptions.items()
        }

    async def _report(self, session: AsyncSession, now: datetime) -> None:
        """Writes how far behind each partition consumed here is onto its lease, where
        any replica answering ``status`` reads it."""
        rows = [
            {"b_partition": p, "b_events": events, "b_seconds": seconds}
            for p, (events, seconds) in self.lag().items()
        ]
        for row in rows:  # and for Prometheus, from the replica that holds it
            labels = (self.consumer, str(row["b_partition"]))
            BEHIND_EVENTS.labels(*labels).set(row["b_events"])
            BEHIND_SECONDS.labels(*labels).set(row["b_seconds"])
        if not rows:
            return
        lc = self.leases.c
        await session.execute(
            sql_update(self.leases)
            .where(
                lc.consumer == self.consumer,
                lc.holder == self.holder,
                lc.partition == bindparam("b_partition"),
            )
            .values(
                behind_events=bindparam("b_events"),
                behind_seconds=bindparam("b_seconds"),
                reported_at=now,
            ),
            rows,
        )

    async def status(self) -> list[PartitionLag]:
        """Every partition: its holder and how far behind it is, live for those consumed
        here, else as their holders last reported."""
        now = utcnow()
        found = {
            p: PartitionLag(self.consumer, p, self.holder, events, seconds, now)
            for p, (events, seconds) in self.lag().items()
        }
        if not self._alone:
            lc = self.leases.c
            async with self.db.read() as session:
                rows = await session.execute(
                    select(
                        lc.partition,
                        lc.holder,
                        lc.behind_events,
                        lc.behind_seconds,
                        lc.reported_at,
                    ).where(lc.consumer == self.consumer, lc.expires_at > now)
                )
                for row in rows:
                    found.setdefault(
                        int(row.partition),
                        PartitionLag(
                            self.consumer,
                            int(row.partition),
                            row.holder,
                            int(row.behind_events),
                            float(row.behind_seconds),
                            row.reported_at,
                        ),
                    )
        return [
            found.get(p, PartitionLag(self.consumer, p, "", 0, 0.0, None))
            for p in range(self.count)
        ]

    async def _renew_membership(
        self, session: AsyncSession, now: datetime, expires: datetime
    ) -> int:
        """Renews this replica's membership, forgets replicas gone silent; how many live."""
        mc = self.members.c
        moved = await affected(
            session,
            sql_update(self.members)
            .where(mc.consumer == self.consumer, mc.holder == self.holder)
            .values(expires_at=expires),
        )
        if not moved:
            await session.execute(
                self.db.insert_ignoring_duplicates(self.members).values(
                    consumer=self.consumer, holder=self.holder, expires_at=expires
                )
            )
        await session.execute(
            delete(self.members).where(mc.consumer == self.consumer, mc.expires_at < now)
        )
        alive = await session.scalar(
            select(func.count()).select_from(self.members).where(mc.consumer == self.consumer)
        )
        return int(alive or 1)

    async def _take(
        self,
        session: AsyncSession,
        partition: int,
        leased: bool,
        now: datetime,
        expires: datetime,
    ) -> bool:
        """Takes ``partition`` when nobody holds it or its lease has expired."""
        lc = self.leases.c
        if not leased:
            return bool(
                await affected(
                    session,
                    self.db.insert_ignoring_duplicates(self.leases).values(
                        consumer=self.consumer,
                        partition=partition,
                        holder=self.holder,
                        expires_at=expires,
                    ),
                )
            )
        return bool(
            await affected(
                session,
                sql_update(self.leases)
                .where(
                    lc.consumer == self.consumer,
                    lc.partition == partition,
                    lc.expires_at <= now,
                )
                .values(holder=self.holder, expires_at=expires),
            )
        )

    async def _follow(self, partitions: list[int], deadline: float) -> None:
        """Consumes exactly ``partitions`` from now on, each until ``deadline``."""
        for partition in [p for p in self.held if p not in partitions]:
            log.warning("%s: partition %d was lost; stopping it", self.consumer, partition)
            await self._unsubscribe(partition)
        for partition in partitions:
            self.held[partition] = deadline
            if partition not in self._subscriptions:
                await self._subscribe(partition)

    async def _subscribe(self, partition: int) -> None:
        assert self._bus is not None
        subscriptions = []
        for consumer in self._consumers:
            subscriptions.append(
                await self._bus.subscribe_batch(
                    consumer.pattern,
                    consumer.handler,
                    durable=consumer.durable,
                    partition=partition,
                )
            )
        self._subscriptions[partition] = subscriptions
        log.info("%s: consuming partition %d of %d", self.consumer, partition, self.count)

    async def _unsubscribe(self, partition: int) -> None:
        """Stops consuming ``partition`` (the batch in hand finishes first)."""
        self.held.pop(partition, None)
        for gauge in (BEHIND_EVENTS, BEHIND_SECONDS):  # another replica reports it now
            with contextlib.suppress(KeyError):
                gauge.remove(self.consumer, str(partition))
        for subscription in self._subscriptions.pop(partition, []):
            await subscription.stop()

    async def _release(self, partition: int) -> None:
        """Stops consuming ``partition``, then gives up its lease for another replica."""
        await self._unsubscribe(partition)
        lc = self.leases.c
        async with self.db.transaction() as session:
            await session.execute(
                delete(self.leases).where(
                    lc.consumer == self.consumer,
                    lc.partition == partition,
                    lc.holder == self.holder,
                )
            )
        log.info("%s: let partition %d go", self.consumer, partition)

    async def _stop_overdue(self) -> None:
        """Stops the partitions whose lease may have expired meanwhile."""
        now = time.monotonic()
        for partition in [p for p, deadline in self.held.items() if deadline < now]:
            log.warning(
                "%s: partition %d not renewed in time; stopping it", self.consumer, partition
            )
            await self._unsubscribe(partition)

    async def stop(self) -> None:
        """Stops consuming and lets every partition go at once (others take them over on
        their next balance)."""
        if self._task is not None:
            await self._steps.stop(self._task)
            self._task = None
        for partition in list(self._subscriptions):
            await self._unsubscribe(partition)
        if self._alone:
            return
        lc, mc = self.leases.c, self.members.c
        with contextlib.suppress(Exception):  # the database may be gone: leases expire
            async with self.db.transaction() as session:
                await session.execute(
                    delete(self.leases).where(
                        lc.consumer == self.consumer, lc.holder == self.holder
                    )
                )
                await session.execute(
                    delete(self.members).where(
                        mc.consumer == self.consumer, mc.holder == self.holder
                    )
                )


class ConsumersServicer(core_pb2_grpc.ConsumersServicer):
    """``plumbline.core.v1.Consumers``: how far the consumers of this process are behind,
    every partition (organization administrators)."""

    def __init__(self) -> None:
        self.leases: dict[str, Leases] = {}

    async def GetLag(
        self, request: core_pb2.ConsumerLagRequest, context: Context
    ) -> core_pb2.ConsumerLag:
        require_admin("read how far the event consumers are behind")
        leases = self.leases.get(request.consumer)
        if leases is None:
            raise NotFound(f"This process runs no consumer {request.consumer!r}.")
        reply = core_pb2.ConsumerLag()
        for lag in await leases.status():
            reply.partitions.add(
                consumer=lag.consumer,
                partition=lag.partition,
                holder=lag.holder,
                events_behind=lag.events_behind,
                seconds_behind=lag.seconds_behind,
                reported_at=format_datetime(lag.reported_at) if lag.reported_at else "",
            )
        return reply
