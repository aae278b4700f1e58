"""The version history of abstract items, built from their owners' change events.

An owner's event that gives a record a new version carries the record as it is after
the change (``plumbline.common.snapshots``); it becomes a row of ``versions``, keyed by
(item, version), so a redelivered event changes nothing and versions may arrive in any
order. Which fields a version changed is worked out once both it and the version before
are here. Relationship events become spans of time in ``relationship_spans``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Row,
    and_,
    bindparam,
    func,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.api.core.v1 import core_pb2
from plumbline.common.access import Access, AccessCache, Action, readable_where
from plumbline.common.dates import parse_iso
from plumbline.common.db import IN_CHUNK, Database, affected, chunked, inserted_keys
from plumbline.common.errors import NotFound, Unavailable
from plumbline.common.events import Event
from plumbline.common.inbox import Inbox, Targets
from plumbline.common.snapshots import snapshot_json
from plumbline.services.baselines.indexed import indexed_columns, inner_json
from plumbline.services.baselines.models import histories, relationship_spans, versions

log = logging.getLogger(__name__)

#: Versions one insert writes at most: their bind parameters stay far within both
#: databases' limits.
_ROWS_PER_INSERT = 500

#: Members of a snapshot that change with every version and say nothing about the change.
UNCOMPARED = frozenset(
    {"version", "modifiedDate", "lastActivityDate", "modifiedBy", "lock", "allowed"}
)


def changed_fields(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The names of what differs between two snapshots: their members, and inside
    the JSON-valued ones (``fieldsJson``) each field by its own name."""
    names: set[str] = set()
    for key in old.keys() | new.keys():
        if key in UNCOMPARED or old.get(key) == new.get(key):
            continue
        if key.endswith("Json"):
            before, after = inner_json(old.get(key)), inner_json(new.get(key))
            names.update(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        else:
            names.add(key)
    return sorted(names)


def readable_ends(access: Access) -> ColumnElement[bool]:
    """A condition that both ends of a relationship span are abstract items the caller
    may read (their history's project: where they are now), as relationship lists leave
    out the others. An end whose history has not arrived yet counts as unreadable."""
    if access.readable() is None:
        return true()
    readable = select(histories.c.item).where(readable_where(access, histories.c.project))
    spans = relationship_spans.c
    return and_(spans.from_item.in_(readable), spans.to_item.in_(readable))


def change_details(version: int, changed: str | None) -> str:
    """``changeDetails`` of a version."""
    if version == 1:
        return "Created"
    if changed is None:
        return ""
    return f"Changed: {changed.replace(',', ', ')}" if changed else "No field changed"


@dataclass(frozen=True)
class RelationshipAt:
    """A relationship as it was at a time, with its ends' versions then."""

    id: int
    from_item: int
    from_version: int
    to_item: int
    to_version: int
    suspect: bool
    relationship_type: int | None


class History:
    """The versions store."""

    def __init__(
        self, db: Database, inbox: Inbox, consistency_wait: float, access: AccessCache
    ) -> None:
        self.db = db
        self.inbox = inbox
        self.access = access
        self.consistency_wait = consistency_wait
        self._changed = asyncio.Condition()

    # ---- consuming --------------------------------------------------------------------

    async def record(self, event: Event) -> None:
        """Applies ``event`` to the history exactly once."""
        await self.record_many([event])

    async def record_many(self, events: list[Event]) -> None:
        """Consumer handler: applies ``events`` to the history exactly once, in one
        transaction. Every event is claimed, those that change nothing here too: the
        positions it advances let reads wait for the owner's latest change
        (read-your-writes).

        New versions are written together, a run of them at a time: a deletion or a
        relationship between two runs is applied in its place, after the versions before
        it (an item created, deleted and restored in one batch ends up not deleted)."""
        async with self.db.transaction() as session:
            claimed = await self.inbox.claim_many(session, events)
            run: list[Event] = []
            for event in claimed:
                versioned = event.payload.get("snapshot") is not None and bool(event.object_ids)
                relationship = event.entity == "relationship" and event.source == "items"
                deleted = (
                    not versioned
                    and bool(event.payload.get("deleted"))
                    and bool(event.object_ids)
                    and event.entity != "relationship"
                )
                if versioned:
                    run.append(event)
                if deleted or relationship:
                    await self._add_versions(session, run)
                    run = []
                if deleted:
                    await self._deleted(session, event)
                if relationship:
                    await self._relationship(session, event)
            await self._add_versions(session, run)
        await self.inbox.committed_many(events)
        async with self._changed:
            self._changed.notify_all()

    async def record_snapshots(self, snapshots: list[core_pb2.Snapshot]) -> int:
        """Records the current state of records that have no history yet (the start on
        existing data); the number recorded."""
        if not snapshots:
            return 0
        async with self.db.transaction() as session:
            known = set(
                (
                    await session.scalars(
                        select(histories.c.item).where(
                            histories.c.item.in_([s.id for s in snapshots])
                        )
                    )
                ).all()
            )
            new = [s for s in snapshots if s.id not in known]
            for s in new:
                await session.execute(
                    self.db.insert_ignoring_duplicates(versions).values(
                        item=s.id,
                        version=s.version,
                        project=s.project,
                        record_type=s.record_type,
                        created_at=parse_iso(s.modified_date),
                        created_by=s.modified_by if s.HasField("modified_by") else None,
                        comment="",
                        changed="" if s.version == 1 else None,
                        snapshot=s.snapshot_json.decode(),
                        **_indexed(s.record_type, s.snapshot_json.decode()),
                    )
                )
                await session.execute(
                    self.db.insert_ignoring_duplicates(histories).values(
                        item=s.id, project=s.project, latest=s.version, deleted=False
                    )
                )
        async with self._changed:
            self._changed.notify_all()
        return len(new)

    async def _add_versions(self, session: AsyncSession, events: list[Event]) -> None:
        """Adds the versions that ``events`` (each with a snapshot) give their records: one
        insert, one update of the histories and one look at the versions before."""
        rows: dict[tuple[int, int], dict[str, Any]] = {}
        for event in events:
            rows.setdefault((event.object_ids[0], event.version), _version_row(event))
        if not rows:
            return
        inserted: set[tuple[int, int]] = set()
        for chunk in chunked(list(rows.values()), _ROWS_PER_INSERT):
            keys = await inserted_keys(
                session, self.db.insert_ignoring_duplicates(versions), chunk, ["item", "version"]
            )
            inserted.update((int(item), int(version)) for item, version in keys)
        if not inserted:
            return
        # Each history moves once, to the newest version added (with its project).
        newest: dict[int, dict[str, Any]] = {}
        for item, version in sorted(inserted):
            newest[item] = {
                "item": item,
                "project": rows[item, version]["project"],
                "latest": version,
                "deleted": False,
            }
        await self._move_histories(session, list(newest.values()))
        await self._fill_changed(session, inserted | {(i, v + 1) for i, v in inserted})

    async def _move_histories(self, session: AsyncSession, rows: list[dict[str, Any]]) -> None:
        """Moves each history forward to its row's version (never back), or starts it.

        One history (the common case of a batch of one) takes an UPDATE and, for a new
        item, an INSERT: on SQLite that costs less CPU than the upsert, which pays off
        from two histories on."""
        if len(rows) == 1:
            [row] = rows
            moved = await affected(
                session,
                update(histories)
                .where(histories.c.item == row["item"], histories.c.latest < row["latest"])
                .values(latest=row["latest"], deleted=False, project=row["project"]),
            )
            if not moved:
                await session.execute(self.db.insert_ignoring_duplicates(histories).values(row))
            return
        # One statement for every row (an executemany): rows written into the VALUES
        # clause made a new statement to compile for every batch.
        insert = self.db.upsert(histories)
        upsert = insert.on_conflict_do_update(
            index_elements=[histories.c.item],
            set_={
                "latest": insert.excluded.latest,
                "deleted": False,
                "project": insert.excluded.project,
            },
            where=histories.c.latest < insert.excluded.latest,
        )
        await session.execute(upsert, rows)

    async def _deleted(self, session: AsyncSession, event: Event) -> None:
        """Deleted records (with the items deleted under them, or a test plan's cycles
        and runs) have no current version, and the relationships of deleted items end
        with them."""
        taken = [*event.payload.get("subtree", []), *event.payload.get("records", [])]
        gone = [*event.object_ids, *(int(i) for i in taken)]
        await session.execute(
            update(histories)
            .where(histories.c.item.in_(gone))
            .values(deleted=True, deleted_at=parse_iso(event.time))
        )
        spans = relationship_spans.c
        await session.execute(
            update(relationship_spans)
            .where(
                spans.valid_to.is_(None),
                or_(spans.from_item.in_(gone), spans.to_item.in_(gone)),
            )
            .values(valid_to=parse_iso(event.time))
        )

    async def _fill_changed(self, session: AsyncSession, wanted: set[tuple[int, int]]) -> None:
        """Works out what each (item, version) of ``wanted`` changed, where it and the
        version before are both here."""
        targets = sorted((item, version) for item, version in wanted if version > 1)
        if not targets:
            return
        # Most of ``wanted`` are guesses (the version after one just added, in case it came
        # first): which of them are here is read first, without their snapshots.
        here = await self._present(session, targets)
        targets = [pair for pair in targets if pair in here]
        if not targets:
            return
        pairs = sorted(set(targets) | {(item, version - 1) for item, version in targets})
        found = {
            (r.item, r.version): r
            for r in await versions_at(session, pairs, versions.c.snapshot, versions.c.changed)
        }
        changes = []
        for item, version in targets:
            before, after = found.get((item, version - 1)), found.get((item, version))
            if before is None or after is None or after.changed is not None:
                continue
            names = changed_fields(json.loads(before.snapshot), json.loads(after.snapshot))
            changes.append({"b_item": item, "b_version": version, "b_changed": ",".join(names)})
        if changes:
            await session.execute(
                update(versions)
                .where(
                    versions.c.item == bindparam("b_item"),
                    versions.c.version == bindparam("b_version"),
                )
                .values(changed=bindparam("b_changed")),
                changes,
            )

    async def _present(
        self, session: AsyncSession, pairs: list[tuple[int, int]]
    ) -> set[tuple[int, int]]:
        """Which (item, version) ``pairs`` have a version here."""
        return {(int(r.item), int(r.version)) for r in await versions_at(session, pairs)}

    async def _relationship(self, session: AsyncSession, event: Event) -> None:
        """Opens, closes or replaces a relationship's span at the event's time."""
        [rel_id] = event.object_ids[:1] or [0]
        at = parse_iso(event.time)
        await session.execute(
            update(relationship_spans)
            .where(
                relationship_spans.c.relationship == rel_id,
                relationship_spans.c.valid_to.is_(None),
            )
            .values(valid_to=at)
        )
        if event.action == "deleted":
            return
        payload = event.payload
        await session.execute(
            relationship_spans.insert().values(
                relationship=rel_id,
                project=event.project or 0,
                from_item=int(payload["fromItem"]),
                to_item=int(payload["toItem"]),
                relationship_type=payload.get("relationshipType"),
                suspect=bool(payload.get("suspect", False)),
                valid_from=at,
                valid_to=None,
            )
        )

    # ---- reading ----------------------------------------------------------------------

    async def _until(self, ready: Callable[[], Awaitable[bool]]) -> bool:
        """Checks ``ready`` again after each consumed event (and every 50 ms) until it
        holds; False when ``PLUMBLINE_CONSISTENCY_WAIT`` ran out first."""
        deadline = time.monotonic() + self.consistency_wait
        while not await ready():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            async with self._changed:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), min(remaining, 0.05))
        return True

    async def _history(self, item: int, known_version: int) -> Row[Any]:
        """The item's history row once it holds ``known_version`` (read-your-writes), if
        the caller may read its project."""
        found: list[Row[Any] | None] = [None]

        async def ready() -> bool:
            async with self.db.read() as session:
                found[0] = (
                    await session.execute(select(histories).where(histories.c.item == item))
                ).first()
            return found[0] is not None and found[0].latest >= known_version

        if not await self._until(ready):
            if found[0] is None and known_version <= 0:
                raise NotFound(f"No history of abstract item {item}.")
            raise Unavailable(
                f"The history of item {item} is catching up with recent changes; try again shortly."
            )
        row = found[0]
        assert row is not None
        (await self.access.current()).require(Action.READ, row.project, f"item {item}")
        return row

    async def readable(self, item: int) -> Row[Any]:
        """The item's history row, if the caller may read its project."""
        return await self._history(item, 0)

    async def caught_up(self, wait_for: Targets) -> None:
        """Waits (bounded) until the events up to the given source positions are in."""
        await self.inbox.caught_up(wait_for, self.consistency_wait, "The history")

    async def wait_for_versions(self, wanted: list[tuple[int, int]]) -> None:
        """Waits (bounded) until the history holds every (item, version) of ``wanted``."""
        pairs = list(dict.fromkeys(wanted))

        async def ready() -> bool:
            nonlocal pairs
            if not pairs:
                return True
            async with self.db.read() as session:
                found = {(r.item, r.version) for r in await versions_at(session, pairs)}
            pairs = [p for p in pairs if p not in found]
            return not pairs

        if not await self._until(ready):
            raise Unavailable("The history is catching up with recent changes; try again shortly.")

    async def page(
        self, item: int, known_version: int, start: int, size: int
    ) -> tuple[list[Row[Any]], int, Any]:
        """A page of an item's versions, oldest first, the total and the history row.

        The common case, a history that has caught up, is one query: the page with the
        history row and the total alongside; otherwise the same query once it has."""
        found = await self._page(item, start, size)
        if found and found[0].latest >= known_version:
            first = found[0]
            project = first.history_project
            (await self.access.current()).require(Action.READ, project, f"item {item}")
            return found, int(first.total), _History(item, project, first.latest, first.deleted)
        history = await self._history(item, known_version)
        found = await self._page(item, start, size)
        if found:
            return found, int(found[0].total), history
        async with self.db.read() as session:  # a page past the last version
            total = await session.scalar(
                select(func.count()).select_from(versions).where(versions.c.item == item)
            )
        return [], int(total or 0), history

    async def _page(self, item: int, start: int, size: int) -> list[Any]:
        """Versions of a page with their history row's members and the total."""
        async with self.db.read() as session:
            return list(
                await session.execute(
                    select(
                        *_listed(),
                        histories.c.latest,
                        histories.c.deleted,
                        histories.c.project.label("history_project"),
                        func.count().over().label("total"),
                    )
                    .join(histories, histories.c.item == versions.c.item)
                    .where(versions.c.item == item)
                    .order_by(versions.c.version)
                    .offset(start)
                    .limit(size)
                )
            )

    async def get(self, item: int, known_version: int, number: int) -> tuple[Row[Any], Row[Any]]:
        """One version with its snapshot, and the history row."""
        history = await self._history(item, known_version)
        async with self.db.read() as session:
            row = (
                await session.execute(
                    select(versions).where(versions.c.item == item, versions.c.version == number)
                )
            ).first()
        if row is None:
            raise NotFound(
                f"Item {item} has no version {number}; its versions are 1 to {history.latest}."
            )
        return row, history

    async def as_of(
        self, item: int, known_version: int, moment: datetime
    ) -> tuple[Row[Any], Row[Any]]:
        """The newest version created at or before ``moment``."""
        history = await self._history(item, known_version)
        async with self.db.read() as session:
            row = (
                await session.execute(
                    select(versions)
                    .where(versions.c.item == item, versions.c.created_at <= moment)
                    .order_by(versions.c.version.desc())
                    .limit(1)
                )
            ).first()
        if row is None:
            raise NotFound(f"Item {item} did not exist yet at {moment.isoformat()}.")
        return row, history

    async def relationships_at(
        self, item: int, known_version: int, moment: datetime, start: int, size: int
    ) -> tuple[list[RelationshipAt], int]:
        """The relationships from or to ``item`` that existed at ``moment`` and whose
        other end the caller may read."""
        await self._history(item, known_version)
        spans = relationship_spans.c
        where = and_(
            or_(spans.from_item == item, spans.to_item == item),
            spans.valid_from <= moment,
            or_(spans.valid_to.is_(None), spans.valid_to > moment),
            readable_ends(await self.access.current()),
        )
        async with self.db.read() as session:
            total = await session.scalar(
                select(func.count()).select_from(relationship_spans).where(where)
            )
            rows = (
                await session.execute(
                    select(relationship_spans)
                    .where(where)
                    .order_by(spans.relationship)
                    .offset(start)
                    .limit(size)
                )
            ).all()
            ends = [r.from_item for r in rows] + [r.to_item for r in rows]
            then = await versions_then(session, ends, moment)
        found = [
            RelationshipAt(
                id=r.relationship,
                from_item=r.from_item,
                from_version=int(then.get(r.from_item, 0)),
                to_item=r.to_item,
                to_version=int(then.get(r.to_item, 0)),
                suspect=r.suspect,
                relationship_type=r.relationship_type,
            )
            for r in rows
        ]
        return found, int(total or 0)


def _version_row(event: Event) -> dict[str, Any]:
    """The ``versions`` row of an event that carries its record's snapshot."""
    version = event.version
    return {
        "item": event.object_ids[0],
        "version": version,
        "project": event.project or 0,
        "record_type": str(event.payload.get("recordType", "")),
        "created_at": parse_iso(event.time),
        "created_by": event.actor,
        "comment": str(event.payload.get("comment", "")),
        "changed": "" if version == 1 else None,
        "snapshot": snapshot_json(event.payload["snapshot"]).decode(),
        "categories": json.dumps(event.payload["categories"])
        if "categories" in event.payload
        else None,
        **_indexed(str(event.payload.get("recordType", "")), event.payload["snapshot"]),
    }


def _indexed(record_type: str, snapshot: str | dict[str, Any]) -> dict[str, int | None]:
    item_type, test_case = indexed_columns(record_type, snapshot)
    return {"item_type": item_type, "test_case": test_case}


@dataclass(frozen=True)
class _History:
    """A history row's members, read alongside a page of versions."""

    item: int
    project: int
    latest: int
    deleted: bool


def _listed() -> list[Any]:
    """The columns of a version in a list (no snapshot)."""
    return [c for c in versions.c if c.name != "snapshot"]


async def versions_then(session: AsyncSession, ids: list[int], moment: datetime) -> dict[int, int]:
    """Each of ``ids``' newest version made at or before ``moment`` (those without one
    left out)."""
    v = versions.c
    found: dict[int, int] = {}
    for part in chunked(sorted(set(ids))):
        rows = await session.execute(
            select(v.item, func.max(v.version).label("version"))
            .where(v.item.in_(part), v.created_at <= moment)
            .group_by(v.item)
        )
        found.update((int(r.item), int(r.version)) for r in rows)
    return found


async def versions_at(
    session: AsyncSession, pairs: list[tuple[int, int]], *columns: Any
) -> list[Any]:
    """The versions rows (item, version and ``columns``) of the (item, version) ``pairs``.

    Asked as ``item IN (...) AND version IN (...)`` and sorted out here: SQLite answers a
    row-value ``(item, version) IN (...)`` by scanning every version (100 ms a PATCH's
    history at 200,000 items), where this walks the primary key.
    """
    wanted = set(pairs)
    found: list[Any] = []
    for chunk in chunked(sorted(wanted), IN_CHUNK // 2):
        rows = await session.execute(
            select(versions.c.item, versions.c.version, *columns).where(
                versions.c.item.in_(sorted({item for item, _ in chunk})),
                versions.c.version.in_(sorted({version for _, version in chunk})),
            )
        )
        found.extend(r for r in rows if (r.item, r.version) in wanted)
    return found
