"""Recording activities from events and reading them back."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Row, and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import AccessCache, Action, readable_where
from plumbline.common.changes import affected_items, describe
from plumbline.common.context import require_admin
from plumbline.common.dates import parse_iso
from plumbline.common.db import Database, first_or_missing
from plumbline.common.events import Event
from plumbline.common.inbox import Inbox, Targets
from plumbline.services.activity.models import activities, project_activities

log = logging.getLogger(__name__)


@dataclass
class ActivityQuery:
    """Filters of ``GET /activities``."""

    project: int
    #: The organisation feed instead of the project's.
    organization: bool = False
    #: Only the activities of this abstract item (of ``project``).
    item: int | None = None
    event_types: list[str] = field(default_factory=list)
    object_types: list[str] = field(default_factory=list)
    item_types: list[int] = field(default_factory=list)
    date_from: datetime | None = None
    date_to: datetime | None = None
    delete_events_only: bool = False
    start_at: int = 0
    max_results: int = 20


class Feed:
    """The activity store."""

    def __init__(
        self, db: Database, inbox: Inbox, consistency_wait: float, access: AccessCache
    ) -> None:
        self.db = db
        self.access = access
        self.inbox = inbox
        self.consistency_wait = consistency_wait

    async def record(self, event: Event) -> None:
        """Stores the activity of ``event`` exactly once."""
        await self.record_many([event])

    async def record_many(self, events: list[Event]) -> None:
        """Consumer handler: stores the activities of ``events`` exactly once, in one
        transaction and one insert."""
        async with self.db.transaction() as session:
            claimed = await self.inbox.claim_many(session, events)
            rows = [row for row in map(_activity_row, claimed) if row is not None]
            if rows:
                await session.execute(activities.insert(), rows)
                await self._count(session, rows)
        await self.inbox.committed_many(events)

    async def _count(self, session: AsyncSession, rows: list[dict[str, Any]]) -> None:
        """Adds ``rows`` to their projects' kept totals, in the inserting transaction and
        one statement (projects in order: two replicas' batches never wait on each other
        in a circle)."""
        added = Counter(
            r["project"] for r in rows if r["project"] is not None and not r["organization"]
        )
        if not added:
            return
        totals = [{"project": p, "total": n} for p, n in sorted(added.items())]
        insert = self.db.upsert(project_activities).values(totals)
        await session.execute(
            insert.on_conflict_do_update(
                index_elements=[project_activities.c.project],
                set_={"total": project_activities.c.total + insert.excluded.total},
            )
        )

    async def caught_up(self, wait_for: Targets) -> None:
        """Waits (bounded) until the feed holds every event up to the given positions."""
        await self.inbox.caught_up(wait_for, self.consistency_wait, "The activity feed")

    async def list(self, query: ActivityQuery) -> tuple[list[Row[Any]], int]:
        """A page of a project's activities, newest first, and the total."""
        conditions: list[Any]
        if query.organization:
            require_admin("read the organization's activities")
            conditions = [activities.c.organization.is_(True)]
        else:
            access = await self.access.current()
            access.require(Action.READ, query.project)
            conditions = [
                activities.c.project == query.project,
                activities.c.organization.is_(False),
                # An activity that names a record of a project the caller may not read
                # is left out (and not counted), as a list leaves out the record.
                activities.c.related_project.is_(None)
                | readable_where(access, activities.c.related_project),
            ]
            if query.item is not None:
                conditions.append(activities.c.item == query.item)
        if query.event_types:
            conditions.append(activities.c.event_type.in_(query.event_types))
        if query.object_types:
            conditions.append(activities.c.object_type.in_(query.object_types))
        if query.item_types:
            conditions.append(activities.c.item_type.in_(query.item_types))
        if query.date_from is not None:
            conditions.append(activities.c.date >= query.date_from)
        if query.date_to is not None:
            conditions.append(activities.c.date <= query.date_to)
        if query.delete_events_only:
            conditions.append(activities.c.event_type == "DELETE")
        where = and_(*conditions)
        async with self.db.read() as session:
            if _whole_feed(query) and access.readable() is None:
                # Every activity of the project, to one who may read every project: the
                # kept total, not a count of the project's history.
                kept = select(project_activities.c.total).where(
                    project_activities.c.project == query.project
                )
                total = await session.scalar(kept)
            else:
                total = await session.scalar(
                    select(func.count()).select_from(activities).where(where)
                )
            rows = (
                await session.execute(
                    select(activities)
                    .where(where)
                    .order_by(activities.c.id.desc())
                    .offset(query.start_at)
                    .limit(query.max_results)
                )
            ).all()
        return list(rows), int(total or 0)

    async def get(self, activity_id: int) -> Row[Any]:
        """One activity, if the caller may read its project (organisation-wide ones:
        organisation administrators)."""
        access = await self.access.current()
        async with self.db.read() as session:
            row = await first_or_missing(
                session,
                select(activities).where(activities.c.id == activity_id),
                f"No activity with id {activity_id}.",
            )
        if row.organization:
            require_admin(f"read activity {activity_id}, a change of the organization")
        elif row.project is not None:
            access.require(Action.READ, row.project, f"activity {activity_id}")
        if row.related_project is not None:  # it names a record of that project
            access.require(Action.READ, row.related_project, f"activity {activity_id}")
        return row

    async def affected(
        self, activity_id: int, start_at: int, max_results: int
    ) -> tuple[Sequence[int], int]:
        """A page of the ids of the items an activity affected (see ``affected_items``),
        and their number."""
        row = await self.get(activity_id)
        ids = affected_items(row.object_type, row.item, subtree_of(row))
        return ids[start_at : start_at + max_results], len(ids)


def _whole_feed(query: ActivityQuery) -> bool:
    """Whether ``query`` asks for a project's whole feed: no filter but paging."""
    return not (
        query.organization
        or query.item is not None
        or query.event_types
        or query.object_types
        or query.item_types
        or query.date_from is not None
        or query.date_to is not None
        or query.delete_events_only
    )


def _activity_row(event: Event) -> dict[str, Any] | None:
    """The ``activities`` row of an event; None for events that are not history."""
    draft = describe(event)
    if draft is None:
        return None
    return {
        "event_id": event.id,
        "date": parse_iso(event.time),
        "details": draft.details,
        "action": draft.action,
        "user_id": event.actor,
        "user_comment": str(event.payload.get("comment", "")),
        "item": draft.item,
        "item_type": draft.item_type,
        "event_type": draft.event_type,
        "object_type": draft.object_type,
        "project": event.project,
        "organization": draft.organization,
        "subtree": json.dumps(list(draft.subtree)) if draft.subtree else None,
        "related_project": draft.related_project,
    }


def subtree_of(row: Row[Any]) -> tuple[int, ...]:
    """The items an item deletion took along (none for other activities, and for
    deletions recorded before activities kept them)."""
    return tuple(json.loads(row.subtree)) if row.subtree else ()
