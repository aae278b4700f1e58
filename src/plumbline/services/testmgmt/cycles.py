"""Test cycles: created from a plan with their runs generated, regenerated on change,
deleted with their runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common import jsonpatch
from plumbline.common.access import Access, Action
from plumbline.common.catalog import Catalog
from plumbline.common.context import Principal
from plumbline.common.dates import utcnow
from plumbline.common.errors import InvalidArgument, Unavailable
from plumbline.common.events import Event
from plumbline.common.fields import check_fields
from plumbline.common.recordsearch import page
from plumbline.services.testmgmt import generation, remote, store
from plumbline.services.testmgmt.api.messages import snapshot
from plumbline.services.testmgmt.generation import Wanted
from plumbline.services.testmgmt.groups import group_of
from plumbline.services.testmgmt.models import records
from plumbline.services.testmgmt.plans import editable
from plumbline.services.testmgmt.store import CYCLE, PLAN, RUN

#: Members shown in a cycle's fields that are not fields of its type.
SHOWN = frozenset(("testPlan",))


@dataclass(frozen=True)
class NewRuns:
    """Runs about to be made: where each goes, its test case, id and document key."""

    wanted: list[Wanted]
    cases: dict[int, remote.TestCase]
    keys: list[str]
    ids: list[int]
    item_type: int

    def rows(
        self,
        plan: Row[Any],
        cycle: int,
        caller: Principal,
        now: datetime,
        skip: set[tuple[int, int]] | None = None,
    ) -> list[dict[str, Any]]:
        """Their insert values, leaving out the places in ``skip`` (taken meanwhile)."""
        return [
            generation.run_row(
                run_id=run_id,
                key=key,
                item_type=self.item_type,
                plan=plan,
                cycle=cycle,
                wanted=w,
                case=self.cases[w.test_case],
                caller=caller,
                now=now,
            )
            for run_id, key, w in zip(self.ids, self.keys, self.wanted, strict=True)
            if not skip or (w.group, w.test_case) not in skip
        ]


#: A change of a cycle and what it becomes: its fields and generation config, from
#: the cycle as it is.
Change = Callable[[Row[Any]], tuple[Any, bytes]]

#: How often a cycle's change is worked out again when the cycle changed meanwhile.
REPLACE_ATTEMPTS = 5


class _Changed(Exception):
    """The cycle changed between working out a change and writing it."""


@dataclass(frozen=True)
class Regeneration:
    """A cycle's new fields and config, the runs it wants and the new ones to make."""

    fields: dict[str, Any]
    config: generation.Config
    wanted: list[Wanted]
    new_runs: NewRuns


class Cycles(store.Domain):
    """Test cycles of test plans."""

    async def page(self, plan: int, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """``GET /testplans/{id}/testcycles``, oldest first."""
        access = await self.access.current()
        where = [records.c.kind == CYCLE, records.c.plan == plan]
        async with self.db.read() as session:
            await store.load(session, plan, PLAN, access)
            order = [records.c.created_at, records.c.id]
            return await page(session, records, where, order, start, size)

    async def _fields(self, values: Any) -> tuple[int, dict[str, Any]]:
        catalog = await self.items.catalog()
        item_type = await self.items.item_type(remote.CYCLE)
        if isinstance(values, dict):
            # Shown in a cycle's fields, not a field of its type: a GET's fields PUT back
            # keep it, and it is ignored (the cycle's plan does not change).
            values = {k: v for k, v in values.items() if k not in SHOWN}
        fields = check_fields(catalog, item_type, values, creating=True)
        start, end = fields.get("startDate"), fields.get("endDate")
        if start and end and end < start:
            raise InvalidArgument(
                f"fields.endDate ({end}) must not be before fields.startDate ({start})."
            )
        return item_type.id, fields

    async def create(self, plan_id: int, values: Any, config_json: bytes) -> int:
        """``POST /testplans/{id}/testcycles``: the cycle and its generated runs."""
        access = await self.access.current()
        item_type, fields = await self._fields(values)
        config = generation.parse_config(json.loads(config_json) if config_json else None)
        async with self.db.read() as session:
            plan = await store.load(session, plan_id, PLAN, access, Action.WRITE)
            wanted = await generation.wanted_runs(session, plan_id, None, config)
        # The cycle's id and key come before its runs' (abstract items sort by them).
        [cycle_id] = await self.items.new_ids(1)
        [key] = await self.items.document_keys(plan.project, item_type, 1)
        new_runs = await self._new_runs(plan.project, wanted)
        catalog = await self.items.catalog()
        caller = access.principal
        now = utcnow()
        async with self.outbox.transaction() as session:
            plan = await store.load(session, plan_id, PLAN, access, Action.WRITE, for_update=True)
            store.check_lock(plan, caller)
            await session.execute(
                records.insert().values(
                    **store.new_record(
                        cycle_id,
                        CYCLE,
                        plan.project,
                        item_type,
                        key,
                        remote.CYCLE,
                        fields,
                        caller,
                        now,
                    ),
                    plan=plan_id,
                    generation_json=config.to_json(),
                )
            )
            rows = new_runs.rows(plan, cycle_id, caller, now)
            if rows:
                await session.execute(records.insert(), rows)
            written = await store.rows_by_id(session, [cycle_id, *(r["id"] for r in rows)])
            payload = {"itemType": item_type, "name": fields.get("name", ""), "documentKey": key}
            payload["testPlan"] = plan_id
            payload["testRuns"] = len(rows)
            payload.update(snapshot(written[cycle_id], catalog, access))
            events = [
                store.record_event("created", CYCLE, cycle_id, plan.project, caller, 1, payload)
            ]
            events += [
                _run_event("created", written[r["id"]], caller, catalog, access) for r in rows
            ]
            await self.outbox.add_all(session, events)
        return cycle_id

    async def _new_runs(self, project: int, wanted: list[Wanted]) -> NewRuns:
        """Ids, keys and test cases for the runs of ``wanted`` whose test cases still
        exist and the caller may read."""
        case_type = await self.items.item_type(remote.CASE)
        found = await self.items.test_cases([w.test_case for w in wanted])
        cases = {k: v for k, v in found.items() if v.item_type == case_type.id}
        wanted = [w for w in wanted if w.test_case in cases]
        run_type = (await self.items.item_type(remote.RUN)).id
        keys = await self.items.document_keys(project, run_type, len(wanted))
        return NewRuns(wanted, cases, keys, await self.items.new_ids(len(wanted)), run_type)

    async def update(self, cycle_id: int, values: Any, config_json: bytes) -> None:
        """``PUT /testcycles/{id}``: new fields, and the runs regenerated.

        Runs of test cases the cycle still includes keep their results; cases added to
        a group since get runs; runs of cases no longer included are deleted.
        """
        await self._replace(cycle_id, lambda _cycle: (values, config_json))

    async def patch(self, cycle_id: int, operations: Any) -> None:
        """``PATCH /testcycles/{id}``: operations on the PUT request object."""
        item_type = await self.items.item_type(remote.CYCLE)

        def patched(cycle: Row[Any]) -> tuple[Any, bytes]:
            document = {
                "fields": editable(cycle, item_type),
                "testRunGenerationConfig": json.loads(cycle.generation_json or "{}"),
            }
            result = jsonpatch.apply(document, operations)
            config = result.get("testRunGenerationConfig")
            return result.get("fields") or {}, json.dumps(config or {}).encode()

        await self._replace(cycle_id, patched)

    async def _replace(self, cycle_id: int, change: Change) -> None:
        """The cycle changed by ``change(cycle)`` (its fields and generation config) and
        its runs regenerated. What to generate is worked out before the write (it asks
        the items service); when the cycle changed meanwhile, the change is worked out
        again on the cycle as it now is, so that no concurrent change is lost."""
        for _ in range(REPLACE_ATTEMPTS):
            try:
                await self._replace_once(cycle_id, change)
                return
            except _Changed:
                continue
        raise Unavailable(
            f"Test cycle {cycle_id} kept changing while this change was applied; try again."
        )

    async def _replace_once(self, cycle_id: int, change: Change) -> None:
        access = await self.access.current()
        async with self.db.read() as session:
            cycle = await store.load(session, cycle_id, CYCLE, access, Action.WRITE)
        values, config_json = change(cycle)
        _, fields = await self._fields(values)
        async with self.db.read() as session:
            config = (
                generation.parse_config(json.loads(config_json))
                if config_json
                else generation.parse_config(json.loads(cycle.generation_json or "{}"))
            )
            wanted = await generation.wanted_runs(session, cycle.plan, cycle_id, config)
            existing = await _runs_of(session, cycle_id)
        missing = [w for w in wanted if (w.group, w.test_case) not in existing]
        new_runs = await self._new_runs(cycle.project, missing)
        catalog = await self.items.catalog()
        async with self.outbox.transaction() as session:
            locked = await store.load(
                session, cycle_id, CYCLE, access, Action.WRITE, for_update=True
            )
            if locked.version != cycle.version:
                raise _Changed
            store.check_lock(locked, access.principal)
            await self._regenerate(
                session, locked, Regeneration(fields, config, wanted, new_runs), catalog, access
            )

    async def _regenerate(
        self,
        session: AsyncSession,
        cycle: Row[Any],
        change: Regeneration,
        catalog: Catalog,
        access: Access,
    ) -> None:
        caller = access.principal
        now = utcnow()
        cycle_id = cycle.id
        fields = change.fields
        plan = await store.load(session, cycle.plan, PLAN, access)
        existing = await _runs_of(session, cycle_id)
        keep = {(w.group, w.test_case): w for w in change.wanted}
        deleted, moved = [], []
        for place, run in existing.items():
            if place not in keep:
                await session.execute(delete(records).where(records.c.id == run.id))
                deleted.append(run)
            elif run.sort_order != keep[place].sort_order:
                # Its place is part of the run (sortOrderFromTestGroup): a new version.
                await store.touch(session, run, caller, now, sort_order=keep[place].sort_order)
                moved.append(run.id)
        rows = change.new_runs.rows(plan, cycle_id, caller, now, skip=set(existing))
        if rows:
            await session.execute(records.insert(), rows)
        await store.touch(
            session,
            cycle,
            caller,
            now,
            fields_json=json.dumps(fields),
            name=str(fields.get("name", ""))[:255],
            generation_json=change.config.to_json(),
        )
        made = [r["id"] for r in rows]
        written = await store.rows_by_id(session, [cycle_id, *moved, *made])
        payload = {**store.summary(cycle, fields), "testPlan": cycle.plan}
        payload.update(snapshot(written[cycle_id], catalog, access))
        events = [
            store.record_event(
                "updated",
                CYCLE,
                cycle_id,
                cycle.project,
                caller,
                written[cycle_id].version,
                payload,
            )
        ]
        events += [_run_event("deleted", run, caller) for run in deleted]
        events += [_run_event("updated", written[i], caller, catalog, access) for i in moved]
        events += [_run_event("created", written[i], caller, catalog, access) for i in made]
        await self.outbox.add_all(session, events)

    async def delete(self, cycle_id: int) -> None:
        """``DELETE /testcycles/{id}``: the cycle and its runs."""
        access = await self.access.current()
        async with self.outbox.transaction() as session:
            cycle = await store.load(
                session, cycle_id, CYCLE, access, Action.WRITE, for_update=True
            )
            store.check_lock(cycle, access.principal)
            runs = await _runs_of(session, cycle_id)
            await session.execute(delete(records).where(records.c.cycle == cycle_id))
            await session.execute(delete(records).where(records.c.id == cycle_id))
            events = [
                store.record_event(
                    "deleted",
                    CYCLE,
                    cycle_id,
                    cycle.project,
                    access.principal,
                    cycle.version + 1,
                    {**store.summary(cycle), "testPlan": cycle.plan, "testRuns": len(runs)},
                )
            ]
            events += [_run_event("deleted", r, access.principal) for r in runs.values()]
            await self.outbox.add_all(session, events)

    async def group(self, cycle_id: int, group: int) -> tuple[Row[Any], Row[Any]]:
        """``GET /testcycles/{id}/testgroup/{groupId}``: the cycle and a group of its plan."""
        access = await self.access.current()
        async with self.db.read() as session:
            cycle = await store.load(session, cycle_id, CYCLE, access)
            return cycle, await group_of(session, cycle.plan, group)


async def _runs_of(session: AsyncSession, cycle: int) -> dict[tuple[int, int], Row[Any]]:
    rows = (
        await session.execute(
            select(records).where(records.c.kind == RUN, records.c.cycle == cycle)
        )
    ).all()
    return {(r.test_group, r.test_case): r for r in rows}


def _run_event(
    action: str,
    run: Row[Any],
    caller: Principal,
    catalog: Catalog | None = None,
    access: Access | None = None,
) -> Event:
    """A run's event in its cycle's change (``generated``: the cycle's activity tells it);
    with ``catalog`` and ``access``, ``run`` is read after the change and the event
    carries its snapshot."""
    fields = json.loads(run.fields_json)
    payload = {
        "itemType": run.item_type,
        "name": fields.get("name", ""),
        "documentKey": run.document_key,
        "testCycle": run.cycle,
        "testCase": run.test_case,
        "generated": True,
    }
    if catalog is not None and access is not None:
        payload.update(snapshot(run, catalog, access))
    version = run.version + 1 if action == "deleted" else run.version
    return store.record_event(action, RUN, run.id, run.project, caller, version, payload)
