"""Test plans: create, change, archive and delete, each with its event."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import Row, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common import jsonpatch
from plumbline.common.access import Access, Action
from plumbline.common.catalog import Catalog, ItemType
from plumbline.common.dates import utcnow
from plumbline.common.fields import SYSTEM_FIELDS, check_fields, current
from plumbline.common.recordsearch import page
from plumbline.services.testmgmt import remote, store
from plumbline.services.testmgmt.api.messages import snapshot
from plumbline.services.testmgmt.models import group_cases, records, test_groups
from plumbline.services.testmgmt.store import PLAN

#: The name of the test group every new plan starts with.
DEFAULT_GROUP = "Default"


class Plans(store.Domain):
    """The test plans of every project."""

    async def page(self, project: int, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """``GET /testplans?project=``: a project's plans, oldest first."""
        access = await self.access.current()
        access.require(Action.READ, project, f"the test plans of project {project}")
        where = [records.c.kind == PLAN, records.c.project == project]
        async with self.db.read() as session:
            order = [records.c.created_at, records.c.id]
            return await page(session, records, where, order, start, size)

    async def create(self, project: int, values: Any) -> int:
        """``POST /testplans``: a plan with one default test group."""
        access = await self.access.current()
        access.require(Action.WRITE, project, f"the test plans of project {project}")
        catalog = await self.items.catalog()
        item_type = await self.items.item_type(remote.PLAN)
        fields = check_fields(catalog, item_type, values, creating=True)
        [key] = await self.items.document_keys(project, item_type.id, 1)
        [plan_id] = await self.items.new_ids(1)
        caller = access.principal
        now = utcnow()
        async with self.outbox.transaction() as session:
            await session.execute(
                records.insert().values(
                    **store.new_record(
                        plan_id, PLAN, project, item_type.id, key, remote.PLAN, fields, caller, now
                    )
                )
            )
            await session.execute(
                test_groups.insert().values(plan=plan_id, name=DEFAULT_GROUP, sort_order=0)
            )
            row = await store.load(session, plan_id, PLAN, access)
            payload = {**store.summary(row), **snapshot(row, catalog, access)}
            await self.outbox.add(
                session, store.record_event("created", PLAN, plan_id, project, caller, 1, payload)
            )
        return plan_id

    async def update(self, plan_id: int, values: Any) -> None:
        """``PUT /testplans/{id}``: the fields sent replace the plan's editable fields."""
        catalog = await self.items.catalog()
        item_type = await self.items.item_type(remote.PLAN)
        fields = check_fields(catalog, item_type, values, creating=True)
        await self._replace(plan_id, catalog, lambda _row: fields)

    async def patch(self, plan_id: int, operations: Any) -> None:
        """``PATCH /testplans/{id}``: operations on the PUT request object, applied to
        the plan as it is once locked (two patches at once both land)."""
        catalog = await self.items.catalog()
        item_type = await self.items.item_type(remote.PLAN)

        def fields_of(row: Row[Any]) -> dict[str, Any]:
            document = {"project": row.project, "fields": editable(row, item_type)}
            values = jsonpatch.apply(document, operations).get("fields") or {}
            return check_fields(catalog, item_type, values, creating=True)

        await self._replace(plan_id, catalog, fields_of)

    async def _replace(
        self, plan_id: int, catalog: Catalog, fields_of: Callable[[Row[Any]], dict[str, Any]]
    ) -> None:
        """The plan's editable fields replaced by ``fields_of(plan)``, read and written
        in one transaction with the plan locked."""
        access = await self.access.current()
        async with self.outbox.transaction() as session:
            row = await store.load(session, plan_id, PLAN, access, Action.WRITE, for_update=True)
            fields = fields_of(row)
            store.check_lock(row, access.principal)
            await store.touch(
                session,
                row,
                access.principal,
                utcnow(),
                fields_json=json.dumps(fields),
                name=str(fields.get("name", ""))[:255],
            )
            await self._updated(session, plan_id, catalog, access, store.summary(row, fields))

    async def set_archived(self, plan_id: int, archived: bool) -> None:
        """``PUT /testplans/{id}/archived``."""
        access = await self.access.current()
        catalog = await self.items.catalog()
        async with self.outbox.transaction() as session:
            row = await store.load(session, plan_id, PLAN, access, Action.WRITE, for_update=True)
            store.check_lock(row, access.principal)
            await store.touch(session, row, access.principal, utcnow(), archived=archived)
            payload = {**store.summary(row), "archived": archived}
            await self._updated(session, plan_id, catalog, access, payload)

    async def _updated(
        self,
        session: AsyncSession,
        plan_id: int,
        catalog: Catalog,
        access: Access,
        payload: dict[str, Any],
    ) -> None:
        """The event of a change just written: the plan read back, its version and
        snapshot."""
        row = await store.load(session, plan_id, PLAN, access)
        await self.outbox.add(
            session,
            store.record_event(
                "updated",
                PLAN,
                plan_id,
                row.project,
                access.principal,
                row.version,
                {**payload, **snapshot(row, catalog, access)},
            ),
        )

    async def delete(self, plan_id: int) -> None:
        """``DELETE /testplans/{id}``: the plan with its groups, cycles and runs."""
        access = await self.access.current()
        async with self.outbox.transaction() as session:
            row = await store.load(session, plan_id, PLAN, access, Action.WRITE, for_update=True)
            store.check_lock(row, access.principal)
            # Its cycles and runs go with it, without events of their own: the plan's names
            # them, so that what other services keep for them can go too.
            removed = await session.scalars(
                select(records.c.id).where(records.c.plan == plan_id, records.c.kind != PLAN)
            )
            payload = {**store.summary(row), "records": [int(i) for i in removed]}
            groups = select(test_groups.c.id).where(test_groups.c.plan == plan_id)
            await session.execute(delete(group_cases).where(group_cases.c.test_group.in_(groups)))
            await session.execute(delete(test_groups).where(test_groups.c.plan == plan_id))
            await session.execute(
                delete(records).where(records.c.plan == plan_id, records.c.kind != PLAN)
            )
            await session.execute(delete(records).where(records.c.id == plan_id))
            await self.outbox.add(
                session,
                store.record_event(
                    "deleted",
                    PLAN,
                    plan_id,
                    row.project,
                    access.principal,
                    row.version + 1,
                    payload,
                ),
            )


def editable(row: Row[Any], item_type: ItemType) -> dict[str, Any]:
    """A record's stored fields as its PUT request object holds them (a deleted
    field's values are not among them)."""
    fields = current(item_type, json.loads(row.fields_json))
    return {k: v for k, v in fields.items() if k not in SYSTEM_FIELDS}
