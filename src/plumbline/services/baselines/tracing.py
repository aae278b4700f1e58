"""Traces as they were: at a moment (``asOf``) or when a baseline was taken.

The history holds every version of every abstract item (``versions``, with an item's
type and a run's test case read into columns of their own) and each relationship over
the time it existed (``relationship_spans``); a historic trace reads only those. At a
moment M:

- an abstract item is the version it had then, its newest version made at or before M;
  it existed then unless it was deleted at or before M (``histories.deleted_at``: an
  item deleted and restored since counts as having existed throughout);
- a project's items of a type are those whose version then was in the project and of the
  type, in id order (an item's place in the tree is not kept over time); a baseline's
  are its items of the type in its order, at the versions it holds;
- the relationships are the spans open at M, followed as live traces follow them
  (``plumbline.common.graph``); one whose far end the caller may not read now is left
  out;
- a test case's latest run is chosen among its runs as they were at M, as testmgmt
  chooses among them now (a run with a result first, then the latest change).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.access import Access, AccessCache, Action, readable_where
from plumbline.common.dates import as_utc, format_datetime, parse_datetime, utcnow
from plumbline.common.db import Database, chunked
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.common.graph import Step, check_depth, follow
from plumbline.services.baselines.baselines import Baselines
from plumbline.services.baselines.history import History, versions_at, versions_then
from plumbline.services.baselines.indexed import ITEM, TEST_RECORD, inner_json
from plumbline.services.baselines.models import (
    baseline_items,
    histories,
    relationship_spans,
    versions,
)

#: Record families of test records, by their snapshot's kind.
_FAMILIES = {"PLAN": "testplans", "CYCLE": "testcycles", "RUN": "testruns"}
#: The most items one coverage answer reads (the live coverage's bound).
MAX_COVERED = 1_000_000
#: The smallest step of time both databases keep.
_INSTANT = timedelta(microseconds=1)
#: A run's status before it has a result.
NOT_RUN = "NOT_RUN"


@dataclass(frozen=True)
class Then:
    """The moment a historic trace is answered for, and the baseline it is of (if any)."""

    moment: datetime
    baseline: int | None = None


@dataclass(frozen=True)
class Traced:
    """A page of roots, the steps from them, the nodes they name (with their versions
    then) and the moment."""

    roots: list[int]
    steps: list[Step]
    nodes: list[items_pb2.TraceNode]
    total: int
    moment: datetime


def _existed(moment: datetime) -> ColumnElement[bool]:
    """The history's item was not deleted at or before ``moment``."""
    h = histories.c
    return or_(h.deleted.is_(False), h.deleted_at.is_(None), h.deleted_at > moment)


def _open_at(moment: datetime) -> ColumnElement[bool]:
    spans = relationship_spans.c
    return and_(spans.valid_from <= moment, or_(spans.valid_to.is_(None), spans.valid_to > moment))


class HistoricTraces:
    """Traces, impact and latest results as they were (READ on the project; far ends as
    the caller may read them now)."""

    def __init__(
        self, db: Database, history: History, baselines: Baselines, access: AccessCache
    ) -> None:
        self.db = db
        self.history = history
        self.baselines = baselines
        self.access = access

    async def then(self, as_of: str | None, baseline: int | None) -> Then:
        """The moment ``asOf`` names, or when ``baseline`` was taken."""
        if baseline is not None:
            row = await self.baselines.get(baseline)
            return Then(as_utc(row.created_at), int(row.id))
        if not as_of:
            raise InvalidArgument("give asOf or baseline")
        return Then(parse_datetime(as_of, "asOf"))

    async def trace(
        self,
        then: Then,
        project: int,
        item_type: int,
        upstream: bool,
        depth: int,
        types: Sequence[int],
        test_case_types: frozenset[int],
        start: int,
        size: int,
    ) -> Traced:
        """A page of the project's items of ``item_type`` then, and their trace then."""
        check_depth(depth)
        access = await self.access.current()
        access.require(Action.READ, project, f"project {project}")
        roots_query = await self._roots(then, project, item_type)
        async with self.db.read() as session:
            total = await session.scalar(select(func.count()).select_from(roots_query.subquery()))
            page = (await session.execute(roots_query.offset(start).limit(size))).all()
            roots = [int(r.item) for r in page]
            steps = await self._walk(session, access, then.moment, roots, upstream, depth, types)
            pinned = {int(r.item): int(r.version) for r in page}
            nodes = await self._describe(
                session, then, [*roots, *(s.item for s in steps)], pinned, test_case_types
            )
        return _traced(roots, steps, nodes, int(total or 0), then.moment)

    async def impact(
        self,
        item: int,
        as_of: str | None,
        version: int | None,
        depth: int,
        types: Sequence[int],
        test_case_types: frozenset[int],
    ) -> Traced:
        """Everything downstream of ``item`` as it was at ``as_of``, or when its
        ``version`` was made."""
        check_depth(depth)
        history = await self.history.readable(item)
        if version is not None:
            moment = await self._while_current(item, version, history)
        else:
            moment = parse_datetime(as_of or "", "asOf")
        access = await self.access.current()
        async with self.db.read() as session:
            then = await versions_then(session, [item], moment)
            if item not in then:
                raise NotFound(f"Item {item} did not exist yet at {format_datetime(moment)}.")
            deleted_at = as_utc(history.deleted_at)
            if history.deleted and deleted_at is not None and deleted_at <= moment:
                raise NotFound(f"Item {item} was deleted at {format_datetime(moment)}.")
            steps = await self._walk(session, access, moment, [item], False, depth, types)
            nodes = await self._describe(
                session, Then(moment), [item, *(s.item for s in steps)], then, test_case_types
            )
        return _traced([item], steps, nodes, 1, moment)

    async def coverage(
        self,
        then: Then,
        project: int,
        item_type: int,
        types: Sequence[int],
        test_case_types: frozenset[int],
    ) -> list[tuple[int, list[int]]]:
        """Every item of ``item_type`` in the project then, in order, with the test cases
        it related to downstream by ``types`` then (those the caller may read)."""
        if not types:
            raise InvalidArgument("coverage needs the relationship types to follow")
        access = await self.access.current()
        access.require(Action.READ, project, f"project {project}")
        roots_query = await self._roots(then, project, item_type)
        spans = relationship_spans.c
        statement = (
            select(spans.from_item, spans.to_item)
            .join(histories, histories.c.item == spans.to_item)
            .where(
                _open_at(then.moment),
                spans.relationship_type.in_(list(types)),
                readable_where(access, histories.c.project),
            )
        )
        async with self.db.read() as session:
            roots = [int(r.item) for r in await session.execute(roots_query.limit(MAX_COVERED))]
            related: dict[int, list[int]] = {}
            for part in chunked(roots):
                rows = await session.execute(
                    statement.where(spans.from_item.in_(part)).order_by(spans.to_item)
                )
                for row in rows:
                    reached = related.setdefault(int(row.from_item), [])
                    if row.to_item not in reached:
                        reached.append(int(row.to_item))
            ends = sorted({c for found in related.values() for c in found})
            typed = await versions_at(
                session,
                sorted((await versions_then(session, ends, then.moment)).items()),
                versions.c.record_type,
                versions.c.item_type,
            )
        cases = {
            int(r.item)
            for r in typed
            if r.record_type == ITEM
            and r.item_type is not None
            and int(r.item_type) in test_case_types
        }
        return [(root, [c for c in related.get(root, []) if c in cases]) for root in roots]

    async def describe(
        self, then: Then, ids: Sequence[int], test_case_types: frozenset[int]
    ) -> list[items_pb2.TraceNode]:
        """Nodes of the items and records in ``ids`` as they were, those the caller may
        read now."""
        access = await self.access.current()
        wanted = sorted(set(ids))
        async with self.db.read() as session:
            readable: set[int] = set()
            for part in chunked(wanted):
                rows = await session.execute(
                    select(histories.c.item).where(
                        histories.c.item.in_(part), readable_where(access, histories.c.project)
                    )
                )
                readable.update(int(r.item) for r in rows)
            return await self._describe(
                session, then, [i for i in wanted if i in readable], {}, test_case_types
            )

    async def _while_current(self, item: int, version: int, history: Any) -> datetime:
        """The last moment ``version`` of ``item`` was its current one: just before the
        next version (or its deletion) was made; now, when it still is."""
        await self.history.get(item, 0, version)  # NotFound, naming the versions there are
        if version < history.latest:
            following, _ = await self.history.get(item, 0, version + 1)
            made: datetime = as_utc(following.created_at)
            return made - _INSTANT
        if history.deleted and history.deleted_at is not None:
            deleted: datetime = as_utc(history.deleted_at)
            return deleted - _INSTANT
        return utcnow()

    async def _roots(self, then: Then, project: int, item_type: int) -> Any:
        """(item, version) of the project's items of ``item_type`` then, in order."""
        v = versions.c
        if then.baseline is not None:
            row = await self.baselines.get(then.baseline)
            if int(row.project) != project:
                raise InvalidArgument(
                    f"baseline: baseline {then.baseline} is of project {row.project}, "
                    f"not {project}."
                )
            b = baseline_items.c
            return (
                select(b.item, b.version)
                .join(versions, and_(v.item == b.item, v.version == b.version))
                .where(b.baseline == then.baseline, v.item_type == item_type)
                .order_by(b.position)
            )
        candidates = versions.alias("candidates")
        ever = select(candidates.c.item).where(
            candidates.c.project == project,
            candidates.c.item_type == item_type,
            candidates.c.created_at <= then.moment,
        )
        newest = (
            select(v.item, func.max(v.version).label("version"))
            .where(v.item.in_(ever), v.created_at <= then.moment)
            .group_by(v.item)
            .subquery()
        )
        at = versions.alias("at")
        return (
            select(newest.c.item, newest.c.version)
            .join(at, and_(at.c.item == newest.c.item, at.c.version == newest.c.version))
            .join(histories, histories.c.item == newest.c.item)
            .where(
                at.c.project == project,
                at.c.item_type == item_type,
                _existed(then.moment),
            )
            .order_by(newest.c.item)
        )

    async def _walk(
        self,
        session: AsyncSession,
        access: Access,
        moment: datetime,
        roots: list[int],
        upstream: bool,
        depth: int,
        types: Sequence[int],
    ) -> list[Step]:
        spans = relationship_spans.c
        mine, other = (
            (spans.to_item, spans.from_item) if upstream else (spans.from_item, spans.to_item)
        )
        statement = (
            select(
                mine.label("mine"),
                other.label("other"),
                spans.relationship.label("id"),
                spans.relationship_type,
                spans.suspect,
            )
            .join(histories, histories.c.item == other)
            .where(_open_at(moment), readable_where(access, histories.c.project))
        )
        if types:
            statement = statement.where(spans.relationship_type.in_(list(types)))

        async def fetch(frontier: list[int]) -> list[Any]:
            rows: list[Any] = []
            for part in chunked(frontier):
                rows += (await session.execute(statement.where(mine.in_(part)))).all()
            return rows

        return await follow(roots, depth, fetch)

    async def _describe(
        self,
        session: AsyncSession,
        then: Then,
        ids: list[int],
        pinned: dict[int, int],
        test_case_types: frozenset[int],
    ) -> list[items_pb2.TraceNode]:
        """The nodes of ``ids`` at their versions then (``pinned`` ones, and a baseline's
        items, at the version given)."""
        wanted = sorted(set(ids))
        known = dict(pinned)
        if then.baseline is not None:
            b = baseline_items.c
            for part in chunked([i for i in wanted if i not in known]):
                held = await session.execute(
                    select(b.item, b.version).where(b.baseline == then.baseline, b.item.in_(part))
                )
                known.update((int(r.item), int(r.version)) for r in held)
        known.update(
            await versions_then(session, [i for i in wanted if i not in known], then.moment)
        )
        rows = await versions_at(
            session,
            sorted(known.items()),
            versions.c.project,
            versions.c.record_type,
            versions.c.item_type,
            versions.c.snapshot,
        )
        nodes = {int(r.item): _node(r, test_case_types) for r in rows}
        return [nodes[i] for i in wanted if i in nodes]

    async def latest(
        self,
        as_of: str,
        test_cases: list[int],
        cycle: int | None,
        plan: int | None,
        release: int | None,
    ) -> list[testmgmt_pb2.LatestResult]:
        """The latest run of each test case in the scope, as the runs were at ``as_of``,
        in the order of ``test_cases``."""
        if sum(x is not None for x in (cycle, plan, release)) > 1:
            raise InvalidArgument("give at most one of testCycle, testPlan and release")
        moment = parse_datetime(as_of, "asOf")
        access = await self.access.current()
        for wanted, noun in ((cycle, "test cycle"), (plan, "test plan")):
            if wanted is not None:
                await self._scope_exists(wanted, noun, moment, access)
        async with self.db.read() as session:
            runs = await self._runs_then(session, sorted(set(test_cases)), moment, access)
            if release is not None:
                plans = {r.plan for r in runs if r.plan is not None}
                released = await self._plans_of_release(session, sorted(plans), moment, release)
                runs = [r for r in runs if r.plan in released]
        if cycle is not None:
            runs = [r for r in runs if r.cycle == cycle]
        if plan is not None:
            runs = [r for r in runs if r.plan == plan]
        held: dict[int, list[Any]] = {}
        for run in runs:
            counted = held.get(run.test_case)
            if counted is None:
                held[run.test_case] = [run, 1]
                continue
            counted[1] += 1
            if run.beats(counted[0]):
                counted[0] = run
        found = []
        for case in dict.fromkeys(test_cases):
            if case in held:
                run, count = held[case]
                found.append(run.message(count))
        return found

    async def _scope_exists(self, record: int, noun: str, moment: datetime, access: Access) -> None:
        async with self.db.read() as session:
            row = (
                await session.execute(
                    select(histories.c.project).where(
                        histories.c.item == record,
                        histories.c.item.in_(
                            select(versions.c.item).where(
                                versions.c.item == record, versions.c.created_at <= moment
                            )
                        ),
                    )
                )
            ).first()
        if row is None:
            raise NotFound(f"No {noun} with id {record} at {format_datetime(moment)}.")
        access.require(Action.READ, int(row.project), f"{noun} {record}")

    async def _runs_then(
        self, session: AsyncSession, test_cases: list[int], moment: datetime, access: Access
    ) -> list[_Run]:
        """The runs of ``test_cases`` the caller may read, as they were at ``moment``."""
        v = versions.c
        then: dict[int, int] = {}
        for part in chunked(test_cases):
            newest = await session.execute(
                select(v.item, func.max(v.version).label("version"))
                .join(histories, histories.c.item == v.item)
                .where(
                    v.test_case.in_(part),
                    v.created_at <= moment,
                    _existed(moment),
                    readable_where(access, histories.c.project),
                )
                .group_by(v.item)
            )
            then.update((int(r.item), int(r.version)) for r in newest)
        rows = await versions_at(
            session, sorted(then.items()), v.created_at, v.record_type, v.snapshot
        )
        return [_Run.of(r) for r in rows if r.record_type == TEST_RECORD]

    async def _plans_of_release(
        self, session: AsyncSession, plans: list[int], moment: datetime, release: int
    ) -> set[int]:
        """The ``plans`` whose ``release`` field was ``release`` at ``moment``."""
        then = await versions_then(session, plans, moment)
        rows = await versions_at(session, sorted(then.items()), versions.c.snapshot)
        return {
            int(r.item)
            for r in rows
            if inner_json(json.loads(r.snapshot).get("fieldsJson")).get("release") == release
        }


@dataclass(frozen=True)
class _Run:
    """A run as it was: what choosing the latest one needs."""

    id: int
    test_case: int
    cycle: int | None
    plan: int | None
    status: str
    execution_date: str | None
    changed_at: datetime

    @classmethod
    def of(cls, row: Any) -> _Run:
        record = json.loads(row.snapshot)
        fields = inner_json(record.get("fieldsJson"))
        cycle, plan = fields.get("testCycle"), record.get("testPlan")
        return cls(
            int(row.item),
            int(fields.get("testCase") or 0),
            int(cycle) if cycle else None,
            int(plan) if plan else None,
            str(fields.get("testRunStatus") or NOT_RUN),
            fields.get("executionDate"),
            as_utc(row.created_at),
        )

    def beats(self, held: _Run) -> bool:
        """A run with a result beats one without; then the later change, then the
        later id."""
        ran, held_ran = self.status != NOT_RUN, held.status != NOT_RUN
        if ran != held_ran:
            return ran
        return (self.changed_at, self.id) > (held.changed_at, held.id)

    def message(self, runs: int) -> testmgmt_pb2.LatestResult:
        result = testmgmt_pb2.LatestResult(
            test_case=self.test_case, run=self.id, status=self.status, runs=runs
        )
        if self.execution_date:
            result.execution_date = str(self.execution_date)
        if self.cycle is not None:
            result.cycle = self.cycle
        return result


def _node(row: Any, test_case_types: frozenset[int]) -> items_pb2.TraceNode:
    """What a trace shows of a version."""
    record = json.loads(row.snapshot)
    fields = inner_json(record.get("fieldsJson"))
    node = items_pb2.TraceNode(
        id=int(row.item),
        project=int(row.project),
        document_key=str(record.get("documentKey", "")),
        name=str(fields.get("name", "")),
        version=int(row.version),
    )
    if row.item_type is not None:
        node.item_type = int(row.item_type)
    if row.record_type == ITEM:
        node.test_case = node.item_type in test_case_types
    else:
        node.foreign = True
        node.family = _FAMILIES.get(str(record.get("kind", "")), "abstractitems")
    return node


def _traced(
    roots: list[int],
    steps: list[Step],
    nodes: list[items_pb2.TraceNode],
    total: int,
    moment: datetime,
) -> Traced:
    """The answer, without steps to nodes the history could not describe (a far end
    whose first version it has not recorded yet)."""
    described = {n.id for n in nodes}
    kept = [s for s in steps if s.item in described]
    return Traced([r for r in roots if r in described], kept, nodes, total, moment)
