"""The change feed: every change a person would read about, recorded from the services'
events in one order, read back by cursor.

Readers resume after the last cursor they saw, so a cursor must never become visible
before a smaller one: two writers (the consumer's partitions, or replicas) could commit
cursors 11 and then 10, and a reader that saw 11 would never see 10. Each write therefore
takes its turn on the ``feed_head`` row before it inserts (PostgreSQL locks the row until
the commit; SQLite writes one transaction at a time anyway), so cursors are drawn and
committed in the same order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import Row, and_, delete, func, select, true, update

from plumbline.common.access import Access, AccessCache, readable_where
from plumbline.common.changes import describe
from plumbline.common.dates import parse_iso, utcnow
from plumbline.common.db import Database, affected
from plumbline.common.errors import FailedPrecondition
from plumbline.common.events import Event
from plumbline.common.inbox import Inbox, Targets
from plumbline.services.hooks.models import changes, feed_head

log = logging.getLogger(__name__)

#: How often, while long polls wait, the feed's head is read for changes another replica
#: recorded (one read for all the waiters; changes this process records wake them at once).
POLL_SECONDS = 0.1
#: Rows retention deletes per transaction.
PRUNE_BATCH = 10_000


@dataclass
class ChangeQuery:
    """Filters and paging of ``GET /rest/labs/events``."""

    after: int = 0
    limit: int = 100
    wait: float = 0.0
    object_types: list[str] = field(default_factory=list)
    event_types: list[str] = field(default_factory=list)
    projects: list[int] = field(default_factory=list)
    item_types: list[int] = field(default_factory=list)


class ChangeFeed:
    """The feed's store: recording (the consumer's handler), reading, retention."""

    def __init__(
        self, db: Database, inbox: Inbox, consistency_wait: float, access: AccessCache
    ) -> None:
        self.db = db
        self.inbox = inbox
        self.access = access
        self.consistency_wait = consistency_wait
        # Set (and replaced) whenever the feed's head moves: long polls wake and look.
        self._recorded = asyncio.Event()
        self._waiting = 0
        self._watcher: asyncio.Task[None] | None = None
        self._listeners: list[Callable[[frozenset[int | None]], None]] = []
        #: The last cursor this process recorded: a head beyond it is another replica's.
        self.recorded_through = 0

    async def record_many(self, events: list[Event]) -> None:
        """Consumer handler: records the changes among ``events`` exactly once, in one
        transaction, after the writers before it (see the module's docstring)."""
        async with self.db.transaction() as session:
            claimed = await self.inbox.claim_many(session, events)
            rows = [row for row in map(_change_row, claimed) if row is not None]
            if rows:
                await session.execute(
                    update(feed_head)
                    .where(feed_head.c.id == 1)
                    .values(writes=feed_head.c.writes + 1)
                )
                # The turn on the head is held: the largest cursor is this write's last.
                # Known before the commit, so no reader sees the head past it first.
                cursors = await session.scalars(changes.insert().returning(changes.c.id), rows)
                last = max(int(cursor) for cursor in cursors)
                self.recorded_through = max(self.recorded_through, last)
        await self.inbox.committed_many(events)
        if rows:
            self._wake()
            projects = frozenset(row["project"] for row in rows)
            for listener in self._listeners:
                listener(projects)

    def listen(self, listener: Callable[[frozenset[int | None]], None]) -> None:
        """Calls ``listener`` with the projects of the changes this process records, each
        time it has recorded some (webhook delivery wakes the webhooks of them)."""
        self._listeners.append(listener)

    def _wake(self) -> None:
        woken, self._recorded = self._recorded, asyncio.Event()
        woken.set()

    async def _watch_head(self) -> None:
        """While long polls wait: reads the head every ``POLL_SECONDS`` and wakes them when
        it moved (another replica recorded changes), then ends when none waits."""
        seen = None
        try:
            while self._waiting:
                try:
                    async with self.db.read() as session:
                        head = await session.scalar(select(func.max(changes.c.id)))
                except Exception:  # a lost database: the waiters look again at their end
                    log.exception("change feed: reading the head for long polls failed")
                    head = seen
                if seen is not None and head != seen:
                    self._wake()
                seen = head
                await asyncio.sleep(POLL_SECONDS)
        finally:
            self._watcher = None

    async def close(self) -> None:
        """Stops watching the head (long polls still waiting end at their time)."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher

    async def caught_up(self, wait_for: Targets) -> None:
        """Waits (bounded) until the feed holds every event up to the given positions."""
        await self.inbox.caught_up(wait_for, self.consistency_wait, "The change feed")

    async def page(self, query: ChangeQuery) -> tuple[list[Row[Any]], int]:
        """The changes after ``query.after`` the caller may read (at most ``limit``), and
        the cursor to resume from. With ``wait``, waits up to that long for the first."""
        where = readable_changes(await self.access.current(), query)
        deadline = time.monotonic() + query.wait
        self._waiting += 1
        try:
            while True:
                recorded = self._recorded
                rows, head = await self._read(query, where)
                left = deadline - time.monotonic()
                if rows or left <= 0:
                    return rows, rows[-1].id if rows else max(head, query.after)
                if self._watcher is None:
                    self._watcher = asyncio.create_task(self._watch_head(), name="change-feed-head")
                try:
                    await asyncio.wait_for(recorded.wait(), left)
                except TimeoutError:
                    pass
        finally:
            self._waiting -= 1

    async def read_as(self, access: Access, query: ChangeQuery) -> tuple[list[Row[Any]], int]:
        """One look at what ``access`` may read after ``query.after`` (no wait): the
        changes and how far the feed reached. Webhook delivery reads as the owner."""
        return await self._read(query, readable_changes(access, query))

    async def cursor_of(self, event_id: str) -> int | None:
        """The cursor of the change of event ``event_id``, while the feed keeps it."""
        async with self.db.read() as session:
            found = await session.scalar(select(changes.c.id).where(changes.c.event_id == event_id))
        return None if found is None else int(found)

    async def head(self) -> int:
        """The feed's last cursor (0 while empty)."""
        async with self.db.read() as session:
            return int(await session.scalar(select(func.max(changes.c.id))) or 0)

    async def _read(self, query: ChangeQuery, where: Any) -> tuple[list[Row[Any]], int]:
        """One look: the matching changes after the cursor, and how far the feed reached
        (so a filtered reader's cursor moves past what it skipped). The head is read
        first: each statement sees the commits made before it, and every cursor up to the
        head was committed by then, so the rows after it are all seen too."""
        async with self.db.read() as session:
            head, pruned = (
                await session.execute(
                    select(
                        select(func.max(changes.c.id)).scalar_subquery(),
                        feed_head.c.pruned_through,
                    )
                )
            ).one()
            if query.after < int(pruned or 0) and query.after != 0:
                raise FailedPrecondition(
                    f"cursor {query.after} is older than the change feed keeps: the changes "
                    f"up to {pruned} are gone; start again with after=0 (the oldest kept)"
                )
            rows = (
                await session.execute(
                    select(changes)
                    .where(changes.c.id > query.after, where)
                    .order_by(changes.c.id)
                    .limit(query.limit)
                )
            ).all()
        return list(rows), int(head or 0)

    async def prune(self, older_than: timedelta) -> int:
        """Deletes the changes recorded more than ``older_than`` ago, a batch at a time;
        how many went."""
        cutoff = utcnow() - older_than
        gone = 0
        while True:
            async with self.db.transaction() as session:
                last = await session.scalar(
                    select(func.max(changes.c.id)).where(
                        changes.c.id.in_(
                            select(changes.c.id)
                            .where(changes.c.recorded_at < cutoff)
                            .order_by(changes.c.id)
                            .limit(PRUNE_BATCH)
                        )
                    )
                )
                if last is None:
                    return gone
                deleted = await affected(
                    session,
                    delete(changes).where(changes.c.id <= last, changes.c.recorded_at < cutoff),
                )
                # Oldest first: what is pruned only grows.
                await session.execute(
                    update(feed_head).where(feed_head.c.id == 1).values(pruned_through=last)
                )
                gone += deleted


def readable_changes(access: Access, query: ChangeQuery) -> Any:
    """The changes ``access`` may read that ``query``'s filters let through."""
    conditions: list[Any] = []
    if not access.everything:
        # The organisation's changes only to its administrators; a project's to who may
        # read it (and the other project a change names, if any).
        conditions = [
            changes.c.organization.is_(False),
            readable_where(access, changes.c.project),
            changes.c.related_project.is_(None) | readable_where(access, changes.c.related_project),
        ]
    if query.object_types:
        conditions.append(changes.c.object_type.in_(query.object_types))
    if query.event_types:
        conditions.append(changes.c.event_type.in_(query.event_types))
    if query.projects:
        conditions.append(changes.c.project.in_(query.projects))
    if query.item_types:
        conditions.append(changes.c.item_type.in_(query.item_types))
    return and_(true(), *conditions)


def _change_row(event: Event) -> dict[str, Any] | None:
    """The ``changes`` row of an event; None for events that are not changes a person
    reads about (the same as the activity feed's)."""
    draft = describe(event)
    if draft is None:
        return None
    return {
        "event_id": event.id,
        "type": event.type,
        "time": parse_iso(event.time),
        "recorded_at": utcnow(),
        "project": event.project,
        "related_project": draft.related_project,
        "organization": draft.organization,
        "actor": event.actor,
        "event_type": draft.event_type,
        "object_type": draft.object_type,
        "object_id": event.object_ids[0] if event.object_ids else None,
        "version": event.version,
        "item": draft.item,
        "item_type": draft.item_type,
        "details": draft.details,
    }
