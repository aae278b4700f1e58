"""Baselines: named sets of item versions of one project, taken in one request.

Taking a baseline asks the items service which items its origin holds, each with its
version and place now, and stores those (item, version, place) rows: the records
themselves are the history's versions, not copied. Reading a baseline's items joins
them to the versions, waiting (bounded) for any the history has not received yet.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from grpc import aio
from sqlalchemy import Row, func, select, update

from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.common.access import AccessCache, Action
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, first_or_missing, insert_id
from plumbline.common.errors import InvalidArgument
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.baselines.history import (
    History,
    changed_fields,
    readable_ends,
    versions_at,
)
from plumbline.services.baselines.models import (
    baseline_items,
    baselines,
    histories,
    relationship_spans,
    versions,
)

#: Rows written per statement when a baseline is taken.
BATCH = 2000


@dataclass(frozen=True)
class Origin:
    """Where a baseline's items come from, within its project."""

    item: int | None = None
    filter: int | None = None
    release: int | None = None
    items: tuple[int, ...] = ()


@dataclass(frozen=True)
class Placed:
    """An item version in a baseline, where it was, the record then and its history."""

    row: Row[Any]
    version: Row[Any]
    history: Row[Any]


@dataclass(frozen=True)
class Change:
    """One difference between two states of a baseline's origin: an item's, with its
    versions (0 where there is none) and, changed, the names of what changed; or a
    relationship's, with its ends. What a kind does not have is None (not on the wire)."""

    kind: Literal["ITEM", "RELATIONSHIP"]
    change: Literal["ADDED", "REMOVED", "CHANGED"]
    id: int
    from_version: int | None = None
    to_version: int | None = None
    changed_fields: list[str] = field(default_factory=list)
    from_item: int | None = None
    to_item: int | None = None
    relationship_type: int | None = None


@dataclass(frozen=True)
class _State:
    """A baseline's origin at one moment: item -> (version, position), and when."""

    items: dict[int, tuple[int, int]]
    moment: datetime


class Baselines:
    """The baselines store."""

    def __init__(
        self,
        db: Database,
        outbox: Outbox,
        history: History,
        items: Callable[[], aio.Channel],
        access: AccessCache,
    ) -> None:
        self.db = db
        self.outbox = outbox
        self.history = history
        self._items = items
        self.access = access

    async def _members(self, project: int, origin: Origin) -> list[items_pb2.Member]:
        request = items_pb2.MembersRequest(project=project, items=list(origin.items))
        for name in ("item", "filter", "release"):
            value = getattr(origin, name)
            if value is not None:
                setattr(request, name, value)
        stub = items_pb2_grpc.BaseliningStub(self._items())
        return list((await stub.ListMembers(request)).members)

    async def create(self, project: int, name: str, description: str, origin: Origin) -> int:
        """Takes a baseline of ``origin`` now (WRITE on the project)."""
        access = await self.access.current()
        access.require(Action.WRITE, project, f"the baselines of project {project}")
        if not name.strip():
            raise InvalidArgument("name is required and must not be blank.")
        members = await self._members(project, origin)
        now = utcnow()
        async with self.outbox.transaction() as session:
            baseline_id = await insert_id(
                session,
                baselines.insert().values(
                    project=project,
                    name=name.strip(),
                    description=description,
                    created_at=now,
                    created_by=access.principal.user_id,
                    origin_item=origin.item,
                    origin_filter=origin.filter,
                    origin_release=origin.release,
                ),
            )
            rows = [
                {
                    "baseline": baseline_id,
                    "item": m.id,
                    "version": m.version,
                    "position": position,
                    "sequence": m.sequence,
                    "parent_item": m.parent_item if m.HasField("parent_item") else None,
                    "parent_version": m.parent_version,
                }
                for position, m in enumerate(members)
            ]
            for start in range(0, len(rows), BATCH):
                await session.execute(baseline_items.insert(), rows[start : start + BATCH])
            await self.outbox.add(
                session,
                Event(
                    "baselines.baseline.created",
                    actor=access.principal.user_id,
                    project=project,
                    object_ids=[baseline_id],
                    payload={"name": name.strip(), "items": len(rows)},
                ),
            )
        return baseline_id

    async def update(self, baseline_id: int, name: str, description: str) -> None:
        """Renames a baseline and sets its description (WRITE on its project); what it
        holds never changes."""
        if not name.strip():
            raise InvalidArgument("name is required and must not be blank.")
        row = await self.get(baseline_id)
        access = await self.access.current()
        access.require(Action.WRITE, row.project, f"the baselines of project {row.project}")
        async with self.outbox.transaction() as session:
            await session.execute(
                update(baselines)
                .where(baselines.c.id == baseline_id)
                .values(name=name.strip(), description=description)
            )
            await self.outbox.add(
                session,
                Event(
                    "baselines.baseline.updated",
                    actor=access.principal.user_id,
                    project=row.project,
                    object_ids=[baseline_id],
                    payload={"name": name.strip()},
                ),
            )

    async def page(self, project: int, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """A project's baselines, oldest first (READ on the project)."""
        (await self.access.current()).require(Action.READ, project, f"project {project}")
        where = baselines.c.project == project
        async with self.db.read() as session:
            total = await session.scalar(select(func.count()).select_from(baselines).where(where))
            rows = (
                await session.execute(
                    select(baselines)
                    .where(where)
                    .order_by(baselines.c.id)
                    .offset(start)
                    .limit(size)
                )
            ).all()
        return list(rows), int(total or 0)

    async def get(self, baseline_id: int) -> Row[Any]:
        """One baseline the caller may read."""
        async with self.db.read() as session:
            row = await first_or_missing(
                session,
                select(baselines).where(baselines.c.id == baseline_id),
                f"No baseline with id {baseline_id}.",
            )
        (await self.access.current()).require(Action.READ, row.project, f"baseline {baseline_id}")
        return row

    async def items(self, baseline_id: int, start: int, size: int) -> tuple[list[Placed], int]:
        """A page of a baseline's items in tree order, with the records then."""
        await self.get(baseline_id)
        where = baseline_items.c.baseline == baseline_id
        async with self.db.read() as session:
            total = await session.scalar(
                select(func.count()).select_from(baseline_items).where(where)
            )
            rows = (
                await session.execute(
                    select(baseline_items)
                    .where(where)
                    .order_by(baseline_items.c.position)
                    .offset(start)
                    .limit(size)
                )
            ).all()
        return await self._placed(list(rows)), int(total or 0)

    async def item(self, baseline_id: int, item_id: int) -> Placed:
        """One item of a baseline."""
        await self.get(baseline_id)
        async with self.db.read() as session:
            row = await first_or_missing(
                session,
                select(baseline_items).where(
                    baseline_items.c.baseline == baseline_id, baseline_items.c.item == item_id
                ),
                f"Item {item_id} is not in baseline {baseline_id}.",
            )
        [placed] = await self._placed([row])
        return placed

    async def relationships(
        self, baseline_id: int, item_id: int, start: int, size: int
    ) -> tuple[list[Any], int]:
        """The relationships of a baseline's item when the baseline was taken."""
        baseline = await self.get(baseline_id)
        placed = await self.item(baseline_id, item_id)
        return await self.history.relationships_at(
            item_id, placed.row.version, baseline.created_at, start, size
        )

    async def _placed(self, rows: list[Row[Any]]) -> list[Placed]:
        """The versions and histories of baseline rows, once the history holds them."""
        if not rows:
            return []
        wanted = [(r.item, r.version) for r in rows]
        found = await self._versions(wanted)
        async with self.db.read() as session:
            kept = {
                h.item: h
                for h in (
                    await session.execute(
                        select(histories).where(histories.c.item.in_([r.item for r in rows]))
                    )
                ).all()
            }
        return [Placed(r, found[(r.item, r.version)], kept[r.item]) for r in rows]

    async def _versions(self, wanted: list[tuple[int, int]]) -> dict[tuple[int, int], Row[Any]]:
        """The versions rows of (item, version) pairs, once the history holds them all: read
        at once, and again after waiting (bounded) when some are not consumed yet."""

        async def read() -> dict[tuple[int, int], Row[Any]]:
            async with self.db.read() as session:
                rest = [c for c in versions.c if c.name not in ("item", "version")]
                rows = await versions_at(session, wanted, *rest)
                return {(v.item, v.version): v for v in rows}

        found = await read()
        if len(found) < len(set(wanted)):
            await self.history.wait_for_versions(wanted)
            found = await read()
        return found

    # ---- compare ---------------------------------------------------------------------

    async def compare(
        self, baseline_id: int, to: int | None, start: int, size: int
    ) -> tuple[list[Change], int]:
        """What changed from a baseline to another of its project, or to its origin now:
        items added, removed and changed (with what changed), then relationships added
        and removed, one page of them."""
        baseline = await self.get(baseline_id)
        before = await self._state(baseline.id, baseline.created_at)
        if to is None:
            members = await self._members(baseline.project, _origin_of(baseline))
            after = _State({m.id: (m.version, i) for i, m in enumerate(members)}, utcnow())
        else:
            other = await self.get(to)
            if other.project != baseline.project:
                raise InvalidArgument(
                    f"to: baseline {to} is of project {other.project}; compare baselines "
                    f"of project {baseline.project}."
                )
            after = await self._state(other.id, other.created_at)
        changes = _item_changes(before, after)
        changes += await self._relationship_changes(baseline.project, before, after)
        page = changes[start : start + size]
        return await self._with_fields(page), len(changes)

    async def _state(self, baseline_id: int, moment: datetime) -> _State:
        async with self.db.read() as session:
            found = await session.execute(
                select(
                    baseline_items.c.item, baseline_items.c.version, baseline_items.c.position
                ).where(baseline_items.c.baseline == baseline_id)
            )
            return _State({i: (v, p) for i, v, p in found}, moment)

    async def _relationship_changes(
        self, project: int, before: _State, after: _State
    ) -> list[Change]:
        then = await self._relationships(project, before)
        now = await self._relationships(project, after)
        added = [now[k] for k in sorted(now.keys() - then.keys())]
        removed = [then[k] for k in sorted(then.keys() - now.keys())]
        return [_relationship_change("ADDED", r) for r in added] + [
            _relationship_change("REMOVED", r) for r in removed
        ]

    async def _relationships(self, project: int, state: _State) -> dict[tuple[Any, ...], Any]:
        """The project's relationships at the state's moment from or to items of the
        state, whose ends the caller may both read (as relationship lists show them)."""
        spans = relationship_spans.c
        readable = readable_ends(await self.access.current())
        async with self.db.read() as session:
            rows = (
                await session.execute(
                    select(relationship_spans).where(
                        spans.project == project,
                        spans.valid_from <= state.moment,
                        (spans.valid_to.is_(None)) | (spans.valid_to > state.moment),
                        readable,
                    )
                )
            ).all()
        return {
            (r.relationship, r.from_item, r.to_item, r.relationship_type): r
            for r in rows
            if r.from_item in state.items or r.to_item in state.items
        }

    async def _with_fields(self, page: list[Change]) -> list[Change]:
        """The changed items of a page with the names of what changed."""
        pairs = [c for c in page if c.change == "CHANGED"]
        if not pairs:
            return page
        # An item's change has both versions (a relationship's has none).
        wanted = [(c.id, v) for c in pairs for v in (c.from_version, c.to_version) if v is not None]
        snapshots: dict[tuple[int, int | None], Any] = {
            key: json.loads(v.snapshot) for key, v in (await self._versions(wanted)).items()
        }
        return [
            replace(
                c,
                changed_fields=changed_fields(
                    snapshots.get((c.id, c.from_version), {}),
                    snapshots.get((c.id, c.to_version), {}),
                ),
            )
            if c.change == "CHANGED"
            else c
            for c in page
        ]


def _origin_of(row: Row[Any]) -> Origin:
    return Origin(item=row.origin_item, filter=row.origin_filter, release=row.origin_release)


def _item_changes(before: _State, after: _State) -> list[Change]:
    """Items added (in the new order), removed (in the old), changed (in the new)."""
    changes = []
    for item, (version, _) in sorted(after.items.items(), key=lambda kv: kv[1][1]):
        was = before.items.get(item)
        if was is None:
            changes.append(Change("ITEM", "ADDED", item, 0, version))
        elif was[0] != version:
            changes.append(Change("ITEM", "CHANGED", item, was[0], version))
    for item, (version, _) in sorted(before.items.items(), key=lambda kv: kv[1][1]):
        if item not in after.items:
            changes.append(Change("ITEM", "REMOVED", item, version, 0))
    # Added, removed and changed items read best grouped: changed first, as a review would.
    order = {"CHANGED": 0, "ADDED": 1, "REMOVED": 2}
    return sorted(changes, key=lambda c: order[c.change])


def _relationship_change(change: Literal["ADDED", "REMOVED"], row: Any) -> Change:
    return Change(
        "RELATIONSHIP",
        change,
        row.relationship,
        from_item=row.from_item,
        to_item=row.to_item,
        relationship_type=row.relationship_type,
    )
