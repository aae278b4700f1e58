"""Test runs: the search, recording results, replacing a run from its test case, delete.

Only execution fields change through PUT and PATCH: the steps' ``status`` and
``result``, ``actualResults``, ``assignedTo``, ``testRunStatus`` and the run type's own
custom fields. Everything else a client sends back (name, steps' texts, the test case,
document key, a whole GET ``data``) is ignored.

``testRunStatus`` follows the steps of a run that has steps (any FAILED, else any
BLOCKED, all PASSED, some set INPROGRESS, none NOT_RUN); a run without steps takes the
status it is sent.
``executionDate`` is the day a result was last recorded, and cleared with NOT_RUN.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Row, bindparam, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common import jsonpatch
from plumbline.common.access import Access, Action, readable_where
from plumbline.common.catalog import Catalog, ItemType
from plumbline.common.dates import utcnow
from plumbline.common.errors import InvalidArgument, NotFound, PlumblineError
from plumbline.common.events import Event
from plumbline.common.fields import SYSTEM_FIELDS, check_value, current
from plumbline.common.recordsearch import page
from plumbline.services.testmgmt import generation, remote, store
from plumbline.services.testmgmt.api.messages import snapshot
from plumbline.services.testmgmt.generation import NOT_RUN, Wanted
from plumbline.services.testmgmt.models import records
from plumbline.services.testmgmt.store import RUN

#: Fields of the run type that are not changed at execution (custom fields are).
FIXED = frozenset(("name", "description", "testRunStatus", "testRunSteps", "executionDate"))
#: Members shown in a run's fields that are not fields of its type; ignored when sent.
SHOWN = frozenset((*SYSTEM_FIELDS, "testCase", "testCycle", "testPlan"))
#: How runs may be sorted, and the column behind each.
SORTS = {
    "documentKey": (records.c.key_sort,),
    "id": (records.c.id,),
    "name": (records.c.name,),
    "createdDate": (records.c.created_at,),
    "modifiedDate": (records.c.modified_at,),
    "lastActivityDate": (records.c.last_activity_at,),
    "testRunStatus": (records.c.status,),
    "sortOrderFromTestGroup": (records.c.test_group, records.c.sort_order),
}
MAX_BATCH = 1000

# Every result recorded runs these two: built once, not per call.
_RUNS_LOCKED = (
    select(records)
    .where(records.c.id.in_(bindparam("ids", expanding=True)), records.c.kind == RUN)
    .with_for_update()
)
_RECORD_ONE = (
    update(records)
    .where(records.c.id == bindparam("b_id"))
    .values(
        fields_json=bindparam("b_fields"),
        status=bindparam("b_status"),
        version=bindparam("b_version"),
        modified_by=bindparam("b_by"),
        modified_at=bindparam("b_now"),
        last_activity_at=bindparam("b_now"),
    )
    .returning(*records.c)
)


@dataclass(frozen=True)
class Outcome:
    """One element's answer in a batch update."""

    id: int
    status: int
    message: str = ""
    run_status: str = ""


@dataclass(frozen=True)
class Change:
    """A run's new stored state."""

    fields: dict[str, Any]
    status: str
    result_changed: bool


def apply_execution(
    catalog: Catalog, run_type: ItemType, row: Any, values: Any, today: str
) -> Change:
    """``row`` with the execution members of ``values`` applied."""
    if not isinstance(values, dict):
        raise InvalidArgument("fields must be a JSON object.")
    stored: dict[str, Any] = json.loads(row.fields_json)
    fields = dict(stored)
    status = row.status or NOT_RUN
    steps_set = False
    for name, value in values.items():
        if name in SHOWN:
            continue
        field = run_type.field(name)
        if field is None:
            known = ", ".join(f.name for f in run_type.fields)
            raise InvalidArgument(
                f"fields.{name} is not a field of item type {run_type.type_key}; "
                f"its fields are: {known}."
            )
        if name == "testRunSteps":
            steps_set = _merge_steps(fields, value)
        elif name == "testRunStatus":
            status = generation.check_status(value, "fields.testRunStatus")
        elif name in ("actualResults", "assignedTo") or (name not in FIXED and not field.read_only):
            checked = check_value(catalog, field, value)
            if checked is None:
                fields.pop(name, None)
            else:
                fields[name] = checked
    steps = fields.get("testRunSteps") or []
    steps_changed = steps_set and steps != (stored.get("testRunSteps") or [])
    if steps:
        status = generation.derive(steps)
    result_changed = (
        status != (row.status or NOT_RUN)
        or steps_changed
        or fields.get("actualResults") != stored.get("actualResults")
    )
    if status == NOT_RUN:
        fields.pop("executionDate", None)
    elif result_changed:
        fields["executionDate"] = today
    return Change(fields, status, result_changed)


def _merge_steps(fields: dict[str, Any], value: Any) -> bool:
    """Takes each sent step's status and result; the steps' texts are the test case's."""
    current: list[dict[str, Any]] = fields.get("testRunSteps") or []
    if value is None:
        value = []
    if not isinstance(value, list):
        raise InvalidArgument("fields.testRunSteps must be a list of steps.")
    if len(value) != len(current):
        raise InvalidArgument(
            f"fields.testRunSteps must have the run's {len(current)} step(s); got {len(value)}."
        )
    merged = []
    for number, (step, sent) in enumerate(zip(current, value, strict=True)):
        if not isinstance(sent, dict):
            raise InvalidArgument(f"fields.testRunSteps[{number}] must be an object.")
        status = sent.get("status") or NOT_RUN
        generation.check_status(status, f"fields.testRunSteps[{number}].status")
        result = sent.get("result") or ""
        if not isinstance(result, str):
            raise InvalidArgument(f"fields.testRunSteps[{number}].result must be a string.")
        merged.append({**step, "status": status, "result": result})
    fields["testRunSteps"] = merged
    return bool(merged)


class Runs(store.Domain):
    """Test runs of every cycle."""

    async def search(
        self,
        cycles: list[int],
        plans: list[int],
        cases: list[int],
        sort: str,
        descending: bool,
        start: int,
        size: int,
    ) -> tuple[list[Row[Any]], int]:
        """``GET /testruns``: ids of one parameter OR, parameters AND; none matches none."""
        if not (cycles or plans or cases):
            return [], 0
        sort = sort or "documentKey"
        if sort not in SORTS:
            raise InvalidArgument(
                f"sortBy: {sort!r} is not a field test runs can be sorted by; "
                f"allowed: {', '.join(SORTS)} (with .asc or .desc)."
            )
        access = await self.access.current()
        where = [records.c.kind == RUN, readable_where(access, records.c.project)]
        if cycles:
            where.append(records.c.cycle.in_(cycles))
        if plans:
            where.append(records.c.plan.in_(plans))
        if cases:
            where.append(records.c.test_case.in_(cases))
        order = [c.desc() if descending else c.asc() for c in SORTS[sort]]
        async with self.db.read() as session:
            return await page(session, records, where, [*order, records.c.id], start, size)

    async def update(self, run_id: int, values: Any) -> None:
        """``PUT /testruns/{id}``: execution results."""
        await self.update_many([(run_id, values)], single=True)

    async def patch(self, run_id: int, operations: Any) -> None:
        """``PATCH /testruns/{id}``: operations on the PUT request object."""
        access = await self.access.current()
        run_type = await self.items.item_type(remote.RUN)
        # Read, patch and write in one transaction with the run locked: two patches of
        # one run at once must both land (each on the other's result), as PUT does.
        async with self.outbox.transaction() as session:
            row = await store.load(session, run_id, RUN, access, Action.EXECUTE, for_update=True)
            stored = current(run_type, json.loads(row.fields_json))
            shown = {**stored, "testRunStatus": row.status or NOT_RUN}
            patched = jsonpatch.apply({"fields": shown}, operations)
            await self.record(session, access, [(run_id, patched.get("fields") or {})], single=True)

    async def update_many(
        self, updates: list[tuple[int, Any]], *, single: bool = False
    ) -> list[Outcome]:
        """Several runs' results in one transaction, an outcome per element.

        With ``single``, the one element's error is raised instead of reported.
        """
        if len(updates) > MAX_BATCH:
            raise InvalidArgument(f"at most {MAX_BATCH} test runs can be updated in one call.")
        access = await self.access.current()
        async with self.outbox.transaction() as session:
            return await self.record(session, access, updates, single=single)

    async def record(
        self,
        session: AsyncSession,
        access: Access,
        updates: list[tuple[int, Any]],
        *,
        single: bool = False,
    ) -> list[Outcome]:
        """Applies execution results in the caller's transaction: one UPDATE for all the
        runs, one read of them back and one INSERT for their events (each with the run's
        snapshot), whatever their number. A run named twice takes both changes in order,
        as one new version."""
        catalog = await self.items.catalog()
        run_type = await self.items.item_type(remote.RUN)
        now = utcnow()
        today = now.date().isoformat()
        found = {
            r.id: SimpleNamespace(**r._mapping)
            for r in (
                await session.execute(_RUNS_LOCKED, {"ids": sorted({i for i, _ in updates})})
            ).all()
        }
        changed: dict[int, SimpleNamespace] = {}
        changes: dict[int, Change] = {}
        outcomes: list[Outcome] = []
        for run_id, values in updates:
            try:
                row = found.get(run_id)
                if row is None:
                    raise NotFound(f"No test run with id {run_id}.")
                access.require(Action.EXECUTE, row.project, f"test run {run_id}")
                store.check_lock(row, access.principal)
                change = apply_execution(catalog, run_type, row, values, today)
                row.fields_json = json.dumps(change.fields)
                row.status = change.status
                earlier = changes.get(run_id)
                if earlier is None:
                    row.version += 1
                else:
                    # Named again: one change of the run, one version (the state between
                    # the two was never stored).
                    change = replace(
                        change, result_changed=change.result_changed or earlier.result_changed
                    )
                changed[run_id] = row
                changes[run_id] = change
                outcomes.append(Outcome(run_id, 200, "OK", change.status))
            except PlumblineError as exc:
                if single:
                    raise
                outcomes.append(Outcome(run_id, exc.http_status, exc.message))
        written: dict[int, Row[Any]] = {}
        if len(changed) == 1:
            # One run (every PUT and PATCH): the UPDATE returns the row the event needs.
            [r] = changed.values()
            stored: Row[Any] = (
                await session.execute(
                    _RECORD_ONE,
                    {
                        "b_id": r.id,
                        "b_fields": r.fields_json,
                        "b_status": r.status,
                        "b_version": r.version,
                        "b_by": access.principal.user_id,
                        "b_now": now,
                    },
                )
            ).one()
            written[stored.id] = stored
        elif changed:
            await session.execute(
                update(records)
                .where(records.c.id == bindparam("b_id"))
                .values(
                    fields_json=bindparam("b_fields"),
                    status=bindparam("b_status"),
                    version=bindparam("b_version"),
                    modified_by=access.principal.user_id,
                    modified_at=now,
                    last_activity_at=now,
                ),
                [
                    {
                        "b_id": r.id,
                        "b_fields": r.fields_json,
                        "b_status": r.status,
                        "b_version": r.version,
                    }
                    for r in changed.values()
                ],
            )
            written = await store.rows_by_id(session, list(changes))
        await self.outbox.add_all(
            session,
            [
                _event("updated", written[i], change, access, catalog)
                for i, change in changes.items()
            ],
        )
        return outcomes

    async def delete(self, run_id: int) -> None:
        """``DELETE /testruns/{id}``."""
        access = await self.access.current()
        async with self.outbox.transaction() as session:
            row = await store.load(session, run_id, RUN, access, Action.WRITE, for_update=True)
            store.check_lock(row, access.principal)
            await session.execute(delete(records).where(records.c.id == run_id))
            await self.outbox.add(
                session,
                store.record_event(
                    "deleted",
                    RUN,
                    run_id,
                    row.project,
                    access.principal,
                    row.version + 1,
                    {**store.summary(row), "testCycle": row.cycle, "testCase": row.test_case},
                ),
            )

    async def refresh(self, run_id: int) -> int:
        """``POST /testruns/{id}/updatedtestcase``: the run replaced by one made from its
        test case's current state, at the same place in the same cycle."""
        access = await self.access.current()
        async with self.db.read() as session:
            row = await store.load(session, run_id, RUN, access, Action.EXECUTE)
            plan = await store.load(session, row.plan, store.PLAN, access)
            assignee = json.loads(row.fields_json).get("assignedTo")
        case = (await self.items.test_cases([row.test_case])).get(row.test_case)
        if case is None:
            raise NotFound(f"Test case {row.test_case} of test run {run_id} no longer exists.")
        [key] = await self.items.document_keys(row.project, row.item_type, 1)
        [new_id] = await self.items.new_ids(1)
        catalog = await self.items.catalog()
        now = utcnow()
        wanted = Wanted(row.test_group, row.test_case, row.sort_order, assignee)
        async with self.outbox.transaction() as session:
            row = await store.load(session, run_id, RUN, access, Action.EXECUTE, for_update=True)
            store.check_lock(row, access.principal)
            values = generation.run_row(
                run_id=new_id,
                key=key,
                item_type=row.item_type,
                plan=plan,
                cycle=row.cycle,
                wanted=wanted,
                case=case,
                caller=access.principal,
                now=now,
            )
            await session.execute(delete(records).where(records.c.id == run_id))
            await session.execute(records.insert().values(**values))
            fresh = await store.load(session, new_id, RUN, access)
            change = Change(json.loads(fresh.fields_json), NOT_RUN, False)
            await self.outbox.add_all(
                session,
                [
                    _event("deleted", row, None, access),
                    _event("created", fresh, change, access, catalog),
                ],
            )
        return new_id


def _event(
    action: str,
    row: Any,
    change: Change | None,
    access: Access,
    catalog: Catalog | None = None,
) -> Event:
    """A run's event; with ``catalog``, ``row`` is read after the change and the event
    carries its snapshot (a deletion's ``row`` is the run as it was)."""
    fields = change.fields if change else json.loads(row.fields_json)
    payload: dict[str, Any] = {
        "itemType": row.item_type,
        "name": fields.get("name", ""),
        "documentKey": row.document_key,
        "testCycle": row.cycle,
        "testCase": row.test_case,
    }
    if change is not None:
        payload["testRunStatus"] = change.status
        payload["result"] = change.result_changed
    if catalog is not None:
        payload.update(snapshot(row, catalog, access))
    version = row.version + 1 if action == "deleted" else row.version
    return store.record_event(action, RUN, row.id, row.project, access.principal, version, payload)


async def runs_of_cycle(session: AsyncSession, cycle: int) -> list[Row[Any]]:
    """A cycle's runs in their plan's order."""
    return list(
        (
            await session.execute(
                select(records)
                .where(records.c.kind == RUN, records.c.cycle == cycle)
                .order_by(records.c.test_group, records.c.sort_order, records.c.id)
            )
        ).all()
    )
