"""Webhook delivery: each active webhook's changes, in the change feed's order, to its
URL, signed as the Standard Webhooks specification says.

- **Who delivers what.** A webhook is delivered by the replica that holds its partition
  of the hooks consumer (``id % partitions``, the same leases as the consumer's,
  ``common.leases``), one task per webhook: a slow or dead receiver holds up only its
  own webhook. The transaction that records a delivery checks the lease, so a replica
  that lost it records nothing more.
- **Order and at least once.** A webhook keeps the cursor it has delivered through and
  sends the changes after it one at a time, in cursor order; the cursor moves only after
  the receiver answered 2xx. A crash between the answer and the commit sends that change
  again (the same ``webhook-id``, which receivers use to drop duplicates).
- **Retries.** A failure (no answer within ``PLUMBLINE_WEBHOOKS_TIMEOUT``, a refused
  connection, any status but 2xx; redirects are not followed) is tried again after
  ``PLUMBLINE_WEBHOOKS_RETRY_BASE`` seconds, then twice as long each time (at most an
  hour, with jitter); once a webhook has failed for ``PLUMBLINE_WEBHOOKS_RETRY_HOURS`` it
  is disabled with the reason. Every attempt goes to the delivery log.
- **Access.** Each batch reads the feed as the owner may read it now (identity's word on
  the owner: active, organisation administrator, roles): a change the owner may no longer
  read is passed over, never sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import aiohttp
import orjson
from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Access
from plumbline.common.dates import as_utc, format_datetime, utcnow
from plumbline.common.db import Database
from plumbline.common.errors import FailedPrecondition
from plumbline.common.leases import LeaseLost, Leases
from plumbline.common.rpc import wire_members
from plumbline.services.hooks import targets
from plumbline.services.hooks.api.changes import change_message
from plumbline.services.hooks.feed import ChangeFeed, ChangeQuery
from plumbline.services.hooks.models import deliveries, redeliveries, webhooks
from plumbline.services.hooks.objects import Records, RecordUnavailable, Ref, reference
from plumbline.services.hooks.owners import Owners
from plumbline.services.hooks.secrets import Sealer, sign
from plumbline.services.hooks.webhooks import filters

log = logging.getLogger(__name__)

#: How often the webhooks this replica delivers are looked up (new, paused, moved).
ASSIGN_SECONDS = 1.0
#: How long an idle webhook waits before it looks again anyway: this process's recordings
#: of its projects wake it at once, and another replica's wake every webhook here
#: (``HEAD_SECONDS``).
IDLE_SECONDS = 5.0
#: How often the feed's head is read for changes another replica recorded (one read for
#: every webhook of the process).
HEAD_SECONDS = 0.25
#: How often an idle webhook's cursor moves past the changes it does not want.
ADVANCE_SECONDS = 5.0
#: Changes read per look.
BATCH = 100
#: The longest a delivered change goes unrecorded (the log, the cursor) while a
#: webhook works through a backlog.
COMMIT_SECONDS = 0.25
#: The longest wait between retries.
MAX_BACKOFF = 3600.0
USER_AGENT = "Plumbline-Webhooks/1"
#: The most of a receiver's answer read (it is not kept: only its status counts).
ANSWER_BYTES = 64 * 1024
#: Changes whose records one request reads (``GET /rest/labs/records``): a request per
#: change, through the gateway, cost more CPU than the delivery itself.
READ_SPAN = 50
#: A record read longer ago than this when its change is sent is read again.
FRESH_SECONDS = 1.0


@dataclass(frozen=True)
class Policy:
    """How deliveries are made and retried (the ``PLUMBLINE_WEBHOOKS_*`` settings)."""

    retry_period: timedelta
    retry_base: float
    timeout: float
    allow_private: bool

    def backoff(self, attempts: int) -> float:
        """Seconds before the next try after ``attempts`` failed ones (with jitter)."""
        ideal = min(self.retry_base * 2.0 ** (attempts - 1), MAX_BACKOFF)
        return ideal * random.uniform(0.8, 1.2)


@dataclass
class Outcome:
    """One attempt's result, as the delivery log keeps it."""

    delivered: bool
    code: int | None
    milliseconds: float
    error: str | None
    at: datetime = field(default_factory=utcnow)


class Deliverer:
    """Delivers the webhooks of the partitions this replica holds."""

    def __init__(
        self,
        db: Database,
        feed: ChangeFeed,
        sealer: Sealer,
        owners: Owners,
        leases: Leases,
        policy: Policy,
        records: Records | None = None,
    ) -> None:
        self.db = db
        self.records = records
        self.feed = feed
        self.sealer = sealer
        self.owners = owners
        self.leases = leases
        self.policy = policy
        #: The deliveries' HTTP client, made on first use (it belongs to the running
        #: loop): aiohttp's, which costs a sixth of httpx's CPU a request (decision 0027).
        self._http: aiohttp.ClientSession | None = None
        self._workers: dict[int, asyncio.Task[None]] = {}
        #: Each delivering webhook's wake-up, the projects it wants (empty: every one),
        #: and when its cursor last moved past changes it did not want.
        self._signals: dict[int, asyncio.Event] = {}
        self._wanted: dict[int, frozenset[int]] = {}
        self._advanced: dict[int, float] = {}
        self._task: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        feed.listen(self._recorded)

    def http(self) -> aiohttp.ClientSession:
        """The deliveries' client: no redirects followed (``allow_redirects=False`` on
        each request), no proxy from the environment, connections kept per receiver."""
        if self._http is None:
            self._http = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, limit_per_host=0),
                timeout=aiohttp.ClientTimeout(total=self.policy.timeout),
                trust_env=False,
                auto_decompress=False,
            )
        return self._http

    def start(self) -> None:
        """Delivers from now on, until ``stop``."""
        self._task = asyncio.create_task(self._assign_forever(), name="webhooks")
        self._watcher = asyncio.create_task(self._watch_head(), name="webhooks-head")

    async def _watch_head(self) -> None:
        """Wakes every webhook here when the feed grows past what this process recorded
        (another replica recorded it: which projects, it does not say)."""
        seen = 0
        while True:
            await asyncio.sleep(HEAD_SECONDS)
            try:
                head = await self.feed.head()
            except Exception:  # a lost database: look again
                continue
            if head > max(seen, self.feed.recorded_through):
                for signal in self._signals.values():
                    signal.set()
            seen = head

    async def stop(self) -> None:
        """Stops every delivery (one under way is cut off; it is sent again later)."""
        tasks = [t for t in (self._task, self._watcher, *self._workers.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._workers.clear()
        if self._http is not None:
            await self._http.close()
        if self.records is not None:
            await self.records.close()

    async def _assign_forever(self) -> None:
        while True:
            try:
                await self.assign()
            except Exception:  # a lost database: look again
                log.exception("webhooks: looking up the webhooks to deliver failed")
            await asyncio.sleep(ASSIGN_SECONDS)

    async def assign(self) -> None:
        """Starts a task for each active webhook of a partition held here, and stops
        those of webhooks removed, paused or now another replica's."""
        async with self.db.read() as session:
            active = (await session.scalars(select(webhooks.c.id).where(webhooks.c.active))).all()
        mine = {int(i) for i in active if self.leases.holds(self._partition(int(i)))}
        for webhook_id, task in list(self._workers.items()):
            if webhook_id not in mine or task.done():
                if not task.done():  # paused, removed, or its partition moved
                    log.info("webhooks: stopping delivery of webhook %d here", webhook_id)
                task.cancel()
                del self._workers[webhook_id]
        for webhook_id in mine - set(self._workers):
            self._workers[webhook_id] = asyncio.create_task(
                self._deliver_forever(webhook_id), name=f"webhook-{webhook_id}"
            )

    def wake(self, webhook_id: int) -> None:
        """Has webhook ``webhook_id`` look now, if it is delivered here (a redelivery
        was asked for)."""
        signal = self._signals.get(webhook_id)
        if signal is not None:
            signal.set()

    def _recorded(self, projects: frozenset[int | None]) -> None:
        """Feed listener: wakes the webhooks whose projects the changes just recorded
        here are of (an organisation's change, of no project, wakes those of every
        project)."""
        for webhook_id, wanted in self._wanted.items():
            if not wanted or None in projects or not wanted.isdisjoint(projects):
                signal = self._signals.get(webhook_id)
                if signal is not None:
                    signal.set()

    async def _deliver_forever(self, webhook_id: int) -> None:
        signal = self._signals[webhook_id] = asyncio.Event()
        try:
            while True:
                signal.clear()
                try:
                    wait = await self.deliver(webhook_id)
                except LeaseLost as lost:
                    log.warning(
                        "webhooks: webhook %d is another replica's now (%s)", webhook_id, lost
                    )
                    return
                except Exception:
                    log.exception(
                        "webhooks: delivering webhook %d failed; trying again", webhook_id
                    )
                    wait = IDLE_SECONDS * 4
                if wait is None:
                    return
                if wait > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(signal.wait(), wait)
        finally:
            self._signals.pop(webhook_id, None)
            self._wanted.pop(webhook_id, None)
            self._advanced.pop(webhook_id, None)

    async def deliver(self, webhook_id: int) -> float | None:
        """One round for a webhook: its pending redeliveries, then the changes after its
        cursor until one fails or none is left. Answers how long to wait before the next
        round (None: the webhook is gone or paused)."""
        row = await self._load(webhook_id)
        if row is None or not row.active:
            return None
        due: datetime | None = as_utc(row.next_attempt)
        if due is not None and due > utcnow():
            # Backing off: wake (at the latest every few seconds) to see changes to it.
            return min((due - utcnow()).total_seconds(), 5.0)
        access = await self.owners.access_of(row.owner)
        await self._redeliver(row, access)
        wanted = filters(row)
        self._wanted[webhook_id] = frozenset(wanted["projects"])
        query = ChangeQuery(
            after=row.delivered_through,
            limit=BATCH,
            object_types=wanted["object_types"],
            event_types=wanted["event_types"],
            projects=wanted["projects"],
            item_types=wanted["item_types"],
        )
        try:
            changes, head = await self.feed.read_as(access, query)
        except FailedPrecondition:
            # Paused past the feed's retention: what it missed is gone; go on from the
            # oldest change kept.
            query.after = 0
            changes, head = await self.feed.read_as(access, query)
        if not changes:
            # Passed over what it does not want: the cursor moves on now and then (a
            # cursor left behind only means reading that stretch again).
            now = time.monotonic()
            if (
                head > row.delivered_through
                and now - self._advanced.get(row.id, 0) > ADVANCE_SECONDS
            ):
                await self._advance(row.id, head)
                self._advanced[row.id] = now
            return IDLE_SECONDS
        attempts = row.attempts
        failing_since: datetime | None = as_utc(row.failing_since)
        secrets = self._secrets(row)
        # Deliveries are recorded (the log, the cursor) a batch at a time: one
        # transaction per COMMIT_SECONDS rather than per change. A crash before the
        # commit sends the batch's changes again (at least once).
        done: list[tuple[Any, int, Outcome]] = []
        committed = time.monotonic()
        with _ReadAhead(self.records if row.include_object else None, row.owner, changes) as read:
            for index, change in enumerate(changes):
                outcome = await self._send(row, secrets, change, await read.record(index))
                attempts += 1
                if outcome.delivered:
                    done.append((change, attempts, outcome))
                    attempts, failing_since = 0, None
                    if time.monotonic() - committed >= COMMIT_SECONDS:
                        await self._delivered(row.id, done)
                        done, committed = [], time.monotonic()
                    continue
                await self._delivered(row.id, done)
                await self._failed(row.id, change, attempts, outcome, failing_since)
                return 0.0  # the next round waits for the retry
        await self._delivered(row.id, done)
        return 0.0

    def _partition(self, webhook_id: int) -> int:
        """The consumer's partition whose holder delivers ``webhook_id``."""
        return webhook_id % self.leases.count

    async def _hold(self, session: AsyncSession, webhook_id: int) -> None:
        """In a recording transaction: LeaseLost unless this replica still delivers it."""
        await self.leases.hold(session, self._partition(webhook_id))

    async def _load(self, webhook_id: int) -> Any:
        async with self.db.read() as session:
            return (
                await session.execute(select(webhooks).where(webhooks.c.id == webhook_id))
            ).one_or_none()

    def _secrets(self, row: Any) -> list[str]:
        """The secrets that sign: the current one, and the previous one in its grace."""
        found = [self.sealer.open(row.secret)]
        expires = as_utc(row.previous_expires)
        if row.previous_secret and expires is not None and expires > utcnow():
            found.append(self.sealer.open(row.previous_secret))
        return found

    async def _send(self, row: Any, secrets: list[str], change: Any, record: _Record) -> Outcome:
        """One attempt to deliver ``change`` to webhook ``row``, with its ``record`` as
        read for it (None: none to send)."""
        url = row.url
        message = change_message(change)
        data = wire_members(message)
        if isinstance(record, RecordUnavailable):
            return Outcome(False, None, 0.0, f"not sent: {record}")
        if record is not None:
            data["object"] = record
        body = orjson.dumps({"type": change.type, "timestamp": message.time, "data": data})
        stamp = int(time.time())
        headers = {
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            "webhook-id": change.event_id,
            "webhook-timestamp": str(stamp),
            "webhook-signature": " ".join(sign(s, change.event_id, stamp, body) for s in secrets),
        }
        started = time.perf_counter()
        code: int | None = None
        try:
            await targets.check_address(url, self.policy.allow_private)
            async with self.http().post(
                url, data=body, headers=headers, allow_redirects=False
            ) as response:
                code = response.status
                # Read a short answer to its end, so the connection is kept for the next
                # delivery (an answer left unread closes it); a long one is cut off.
                kept = 0
                async for chunk in response.content.iter_any():
                    kept += len(chunk)
                    if kept > ANSWER_BYTES:
                        break
        except targets.Refused as refused:
            error: str | None = f"not sent: {refused}"
        except TimeoutError:
            error = f"no answer within {self.policy.timeout:g} s"
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            error = f"could not deliver: {type(exc).__name__}: {exc}"[:500]
        else:
            error = None
            if not 200 <= code < 300:
                error = f"the receiver answered {code}"
                if 300 <= code < 400:
                    error += " (redirects are not followed)"
        return Outcome(error is None, code, (time.perf_counter() - started) * 1000, error)

    async def _delivered(self, webhook_id: int, done: list[tuple[Any, int, Outcome]]) -> None:
        """Logs delivered changes and moves the webhook's cursor past the last."""
        if not done:
            return
        async with self.db.transaction() as session:
            await self._hold(session, webhook_id)
            await session.execute(
                insert(deliveries), [_log(webhook_id, c, n, outcome) for c, n, outcome in done]
            )
            await session.execute(
                update(webhooks)
                .where(webhooks.c.id == webhook_id)
                .values(
                    delivered_through=done[-1][0].id,
                    attempts=0,
                    failing_since=None,
                    next_attempt=None,
                )
            )

    async def _failed(
        self,
        webhook_id: int,
        change: Any,
        attempt: int,
        outcome: Outcome,
        failing_since: datetime | None,
    ) -> None:
        """Logs a failed attempt and schedules the retry, or disables the webhook once it
        has failed for the retry period."""
        now = utcnow()
        since = failing_since or now
        values: dict[str, Any] = {"attempts": attempt, "failing_since": since}
        if now - since >= self.policy.retry_period:
            hours = self.policy.retry_period.total_seconds() / 3600
            values |= {
                "active": False,
                "next_attempt": None,
                "disabled_reason": (
                    f"Disabled {format_datetime(now)}: deliveries failed for {hours:g} h "
                    f"since {format_datetime(since)}; the last: {outcome.error}. Make the "
                    "webhook active again to resume from the change that failed."
                ),
            }
            log.warning("webhooks: webhook %d disabled: %s", webhook_id, outcome.error)
        else:
            values["next_attempt"] = now + timedelta(seconds=self.policy.backoff(attempt))
        async with self.db.transaction() as session:
            await self._hold(session, webhook_id)
            await session.execute(
                insert(deliveries).values(_log(webhook_id, change, attempt, outcome))
            )
            await session.execute(
                update(webhooks).where(webhooks.c.id == webhook_id).values(**values)
            )

    async def _advance(self, webhook_id: int, cursor: int) -> None:
        async with self.db.transaction() as session:
            await self._hold(session, webhook_id)
            await session.execute(
                update(webhooks)
                .where(webhooks.c.id == webhook_id, webhooks.c.delivered_through < cursor)
                .values(delivered_through=cursor)
            )

    async def _redeliver(self, row: Any, access: Access) -> None:
        """Sends each change asked for again, once (the log says how it went)."""
        async with self.db.read() as session:
            asked = (
                await session.execute(
                    select(redeliveries)
                    .where(redeliveries.c.webhook == row.id)
                    .order_by(redeliveries.c.id)
                )
            ).all()
        for request in asked:
            changes, _ = await self.feed.read_as(
                access, ChangeQuery(after=request.cursor - 1, limit=1)
            )
            change = changes[0] if changes and changes[0].id == request.cursor else None
            if change is not None:
                with _ReadAhead(
                    self.records if row.include_object else None, row.owner, [change]
                ) as read:
                    record = await read.record(0)
                outcome = await self._send(row, self._secrets(row), change, record)
            async with self.db.transaction() as session:
                await self._hold(session, row.id)
                if change is not None:
                    entry = _log(row.id, change, 1, outcome) | {"redelivery": True}
                    await session.execute(insert(deliveries).values(entry))
                await session.execute(delete(redeliveries).where(redeliveries.c.id == request.id))


#: A change's record as read for its delivery: the record, None (none to send), or why
#: it could not be read now.
_Record = Any


@dataclass
class _Span:
    """Changes ``start`` to ``end`` of a batch whose records one request reads."""

    start: int
    end: int
    task: asyncio.Task[dict[Ref, Any] | RecordUnavailable] | None = None
    #: When the read answered (None while it is under way).
    read_at: float | None = None


class _ReadAhead:
    """The changed records of a webhook's batch, read as its owner ``READ_SPAN`` changes
    at a time in one request, the next span while the second half of this one is
    delivered, so a delivery seldom waits for its read. A record read more than
    ``FRESH_SECONDS`` before its delivery (a slow receiver) is read again, alone, so what
    is sent is the owner's view at about the time it is sent. Reads not taken are
    cancelled when the batch ends (a failed delivery stops it)."""

    def __init__(
        self,
        records: Records | None,
        owner: int,
        changes: list[Any],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.records = records
        self.owner = owner
        self.refs = [reference(c.type, c.event_type, c.object_id) for c in changes]
        self.clock = clock
        self.spans: list[_Span] = []

    def __enter__(self) -> _ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        for span in self.spans:
            assert span.task is not None
            if span.task.done() and not span.task.cancelled():
                span.task.exception()  # taken: a read's failure is not a delivery's
            span.task.cancel()

    async def record(self, index: int) -> _Record:
        ref = self.refs[index]
        if self.records is None or ref is None:
            return None
        span = self._covering(index)
        if span is None:
            span = self._start(index, READ_SPAN)
        elif span.read_at is not None and self.clock() - span.read_at > FRESH_SECONDS:
            span = self._start(index, 1)
        halfway = span.start + (span.end - span.start) // 2
        if index >= halfway and span.end < len(self.refs) and self._covering(span.end) is None:
            self._start(span.end, READ_SPAN)
        assert span.task is not None
        found = await span.task
        return found if isinstance(found, RecordUnavailable) else found.get(ref)

    def _covering(self, index: int) -> _Span | None:
        for span in reversed(self.spans):
            if span.start <= index < span.end:
                return span
        return None

    def _start(self, start: int, size: int) -> _Span:
        span = _Span(start, min(start + size, len(self.refs)))
        span.task = asyncio.create_task(self._read(span))
        self.spans.append(span)
        return span

    async def _read(self, span: _Span) -> dict[Ref, Any] | RecordUnavailable:
        assert self.records is not None
        refs = {ref for ref in self.refs[span.start : span.end] if ref is not None}
        try:
            return await self.records.many(self.owner, refs)
        except RecordUnavailable as exc:
            return exc
        finally:
            span.read_at = self.clock()


def _log(webhook_id: int, change: Any, attempt: int, outcome: Outcome) -> dict[str, Any]:
    return {
        "webhook": webhook_id,
        "cursor": change.id,
        "event_id": change.event_id,
        "type": change.type,
        "attempt": attempt,
        "redelivery": False,
        "at": outcome.at,
        "outcome": "DELIVERED" if outcome.delivered else "FAILED",
        "response_code": outcome.code,
        "duration_ms": round(outcome.milliseconds, 1),
        "error": outcome.error,
    }
