"""A test plan's test groups and the test cases in each, in order."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import Row, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.access import Access, Action
from plumbline.common.db import first_or_missing, insert_id
from plumbline.common.errors import AlreadyExists, InvalidArgument, NotFound
from plumbline.common.events import Event
from plumbline.common.recordsearch import page
from plumbline.services.testmgmt import remote, store
from plumbline.services.testmgmt.models import group_cases, test_groups
from plumbline.services.testmgmt.store import PLAN

MAX_NAME = 255


class Groups(store.Domain):
    """Test groups of test plans."""

    async def page(self, plan: int, start: int, size: int) -> tuple[list[Row[Any]], int]:
        """``GET /testplans/{id}/testgroups``, in the plan's order."""
        access = await self.access.current()
        where = [test_groups.c.plan == plan]
        order = [test_groups.c.sort_order, test_groups.c.id]
        async with self.db.read() as session:
            await store.load(session, plan, PLAN, access)
            return await page(session, test_groups, where, order, start, size)

    async def get(self, plan: int, group: int) -> Row[Any]:
        """One group of a plan."""
        access = await self.access.current()
        async with self.db.read() as session:
            await store.load(session, plan, PLAN, access)
            return await group_of(session, plan, group)

    async def create(self, plan: int, name: str, assigned_to: int | None) -> int:
        """``POST /testplans/{id}/testgroups``: a group at the end of the plan."""
        access = await self.access.current()
        name = _name(name)
        async with self.outbox.transaction() as session:
            row = await store.load(session, plan, PLAN, access, Action.WRITE, for_update=True)
            store.check_lock(row, access.principal)
            last = await session.scalar(
                select(func.max(test_groups.c.sort_order)).where(test_groups.c.plan == plan)
            )
            group = await insert_id(
                session,
                test_groups.insert().values(
                    plan=plan,
                    name=name,
                    assigned_to=assigned_to,
                    sort_order=0 if last is None else last + 1,
                ),
            )
            await self.outbox.add(session, _event("created", row, group, name, access))
        return group

    async def update(self, plan: int, group: int, name: str, assigned_to: int | None) -> None:
        """``PUT /testplans/{id}/testgroups/{groupId}``: name and assignee."""
        access = await self.access.current()
        name = _name(name)
        async with self.outbox.transaction() as session:
            row = await store.load(session, plan, PLAN, access, Action.WRITE, for_update=True)
            store.check_lock(row, access.principal)
            await group_of(session, plan, group)
            await session.execute(
                update(test_groups)
                .where(test_groups.c.id == group)
                .values(name=name, assigned_to=assigned_to)
            )
            await self.outbox.add(session, _event("updated", row, group, name, access))

    async def delete(self, plan: int, group: int) -> None:
        """``DELETE /testplans/{id}/testgroups/{groupId}`` (runs made from it stay)."""
        access = await self.access.current()
        async with self.outbox.transaction() as session:
            row = await store.load(session, plan, PLAN, access, Action.WRITE, for_update=True)
            store.check_lock(row, access.principal)
            found = await group_of(session, plan, group)
            await session.execute(delete(group_cases).where(group_cases.c.test_group == group))
            await session.execute(delete(test_groups).where(test_groups.c.id == group))
            await self.outbox.add(session, _event("deleted", row, group, found.name, access))

    async def list_cases(
        self, plan: int, group: int, start: int, size: int
    ) -> tuple[list[int], int]:
        """The group's test case ids in order."""
        access = await self.access.current()
        where = [group_cases.c.test_group == group]
        order = [group_cases.c.sort_order, group_cases.c.test_case]
        async with self.db.read() as session:
            await store.load(session, plan, PLAN, access)
            await group_of(session, plan, group)
            rows, total = await page(session, group_cases, where, order, start, size)
        return [int(r.test_case) for r in rows], total

    async def check_case(self, plan: int, group: int, test_case: int) -> None:
        """NotFound unless ``test_case`` is in the group."""
        access = await self.access.current()
        async with self.db.read() as session:
            await store.load(session, plan, PLAN, access)
            await group_of(session, plan, group)
            await _case_in(session, group, test_case)

    async def add_case(self, plan: int, group: int, test_case: int) -> None:
        """``POST …/testgroups/{groupId}/testcases``: a test case at the group's end."""
        await self.add_cases(plan, group, [test_case])

    async def add_cases(self, plan: int, group: int, test_cases: list[int]) -> None:
        """Test cases at the group's end in the order given, in one transaction: all of
        them or none. Each is checked, written and announced (``testCaseAdded``) as if it
        had been added alone."""
        if not test_cases:
            raise InvalidArgument("testCases: at least one test case is needed.")
        twice = sorted(case for case, n in Counter(test_cases).items() if n > 1)
        if twice:
            raise InvalidArgument(
                f"testCases: {_ids(twice)} given more than once; each test case can be "
                "in a group once."
            )
        access = await self.access.current()
        case_type = await self.items.item_type(remote.CASE)
        found = await self.items.test_cases(test_cases)
        for test_case in test_cases:
            item = found.get(test_case)
            if item is None:
                raise NotFound(f"No item with id {test_case}.")
            if item.item_type != case_type.id:
                catalog = await self.items.catalog()
                kind = catalog.item_types.get(item.item_type)
                raise InvalidArgument(
                    f"testCase: item {test_case} is of item type "
                    f"{kind.type_key if kind else item.item_type}, not a test case "
                    f"({case_type.type_key}); only test cases can be added to a test group."
                )
        try:
            async with self.outbox.transaction() as session:
                row = await store.load(session, plan, PLAN, access, Action.WRITE, for_update=True)
                store.check_lock(row, access.principal)
                for test_case in test_cases:
                    if found[test_case].project != row.project:
                        # Its runs would copy another project's test case into this one,
                        # where its readers may not see it.
                        raise InvalidArgument(
                            f"testCase: test case {test_case} is in project "
                            f"{found[test_case].project}; test plan {plan} of project "
                            f"{row.project} takes only test cases of its own project."
                        )
                found_group = await group_of(session, plan, group)
                there = await session.scalars(
                    select(group_cases.c.test_case).where(
                        group_cases.c.test_group == group,
                        group_cases.c.test_case.in_(test_cases),
                    )
                )
                _refuse_present(sorted(there), group)
                last = await session.scalar(
                    select(func.max(group_cases.c.sort_order)).where(
                        group_cases.c.test_group == group
                    )
                )
                after = -1 if last is None else last
                await session.execute(
                    group_cases.insert(),
                    [
                        {"test_group": group, "test_case": case, "sort_order": after + 1 + n}
                        for n, case in enumerate(test_cases)
                    ],
                )
                events = [
                    _event("updated", row, group, found_group.name, access, testCaseAdded=case)
                    for case in test_cases
                ]
                await self.outbox.add_all(session, events)
        except IntegrityError:
            # Another request added one of them at the same moment.
            if len(test_cases) == 1:
                raise AlreadyExists(
                    f"Test case {test_cases[0]} already exists in test group {group}."
                ) from None
            raise AlreadyExists(
                f"A test case of {_ids(test_cases)} was added to test group {group} at the "
                "same moment; nothing of this request was added."
            ) from None

    async def remove_case(self, plan: int, group: int, test_case: int) -> None:
        """``DELETE …/testgroups/{groupId}/testcases/{testCaseId}``."""
        access = await self.access.current()
        async with self.outbox.transaction() as session:
            row = await store.load(session, plan, PLAN, access, Action.WRITE, for_update=True)
            store.check_lock(row, access.principal)
            found_group = await group_of(session, plan, group)
            await _case_in(session, group, test_case)
            await session.execute(
                delete(group_cases).where(
                    group_cases.c.test_group == group, group_cases.c.test_case == test_case
                )
            )
            event = _event(
                "updated", row, group, found_group.name, access, testCaseRemoved=test_case
            )
            await self.outbox.add(session, event)

    async def forget_case(self, test_case: int) -> None:
        """A deleted test case leaves every group (its runs stay, with their results)."""
        async with self.db.transaction() as session:
            await session.execute(delete(group_cases).where(group_cases.c.test_case == test_case))


async def group_of(session: AsyncSession, plan: int, group: int) -> Row[Any]:
    """A group of ``plan`` or NotFound."""
    return await first_or_missing(
        session,
        select(test_groups).where(test_groups.c.id == group, test_groups.c.plan == plan),
        f"No test group with id {group} in test plan {plan}.",
    )


async def _case_in(session: AsyncSession, group: int, test_case: int) -> None:
    await first_or_missing(
        session,
        select(group_cases.c.test_case).where(
            group_cases.c.test_group == group, group_cases.c.test_case == test_case
        ),
        f"Test case {test_case} is not in test group {group}.",
    )


def _refuse_present(present: list[int], group: int) -> None:
    """AlreadyExists naming the test cases already in ``group``, if any."""
    if len(present) == 1:
        raise AlreadyExists(f"Test case {present[0]} already exists in test group {group}.")
    if present:
        raise AlreadyExists(f"Test cases {_ids(present)} already exist in test group {group}.")


def _ids(ids: list[int]) -> str:
    """Ids for a message: the first ten, and how many more."""
    shown = ", ".join(str(i) for i in ids[:10])
    return shown if len(ids) <= 10 else f"{shown} and {len(ids) - 10} more"


def _name(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidArgument("name is required and must not be empty.")
    if len(name) > MAX_NAME:
        raise InvalidArgument(f"name must be at most {MAX_NAME} characters.")
    return name


def _event(
    action: str, plan: Row[Any], group: int, name: str, access: Access, **change: int
) -> Event:
    """``testmgmt.testgroup.<action>``: the feed shows it on the plan; ``change`` names the
    test case added or removed. The plan's record does not change: the event carries its
    current version and no snapshot."""
    return Event(
        f"testmgmt.testgroup.{action}",
        actor=access.principal.user_id,
        project=plan.project,
        object_ids=[plan.id],
        version=plan.version,
        payload={"testGroup": group, "name": name, "documentKey": plan.document_key, **change},
    )
