"""The latest result of test cases, for traces, coverage and reports: of all the runs of a
test case in a scope (one cycle, one plan, the plans of a release, or everywhere), the one
whose result was recorded last."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, select, true

from plumbline.common.access import AccessCache, Action, readable_where
from plumbline.common.db import Database, chunked
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.services.testmgmt.generation import NOT_RUN
from plumbline.services.testmgmt.models import records
from plumbline.services.testmgmt.store import CYCLE, PLAN, RUN


@dataclass(frozen=True)
class Scope:
    """Where the runs are looked for: at most one of these; none means every run."""

    cycle: int | None = None
    plan: int | None = None
    release: int | None = None


@dataclass(frozen=True)
class Latest:
    """A test case's latest run in a scope, and how many runs it has there."""

    test_case: int
    run: int
    status: str
    execution_date: str | None
    cycle: int | None
    runs: int


def _newer(candidate: Any, held: Any) -> bool:
    """A run with a result beats one without; then the later result, then the later id."""
    ran, held_ran = candidate.status not in (None, NOT_RUN), held.status not in (None, NOT_RUN)
    if ran != held_ran:
        return ran
    return bool((candidate.modified_at, candidate.id) > (held.modified_at, held.id))


class LatestResults:
    """Reads of runs by test case, as the caller may read them."""

    def __init__(self, db: Database, access: AccessCache) -> None:
        self.db = db
        self.access = access

    async def latest(self, test_cases: list[int], scope: Scope) -> list[Latest]:
        """The latest run of each test case in ``scope`` that has one the caller may read,
        in the order of ``test_cases``. A named cycle or plan must exist and be readable."""
        if sum(x is not None for x in (scope.cycle, scope.plan, scope.release)) > 1:
            raise InvalidArgument("give at most one of testCycle, testPlan and release")
        access = await self.access.current()
        where: list[ColumnElement[bool]] = [
            records.c.kind == RUN,
            readable_where(access, records.c.project),
        ]
        async with self.db.read() as session:
            scoped = await self._scoped(session, scope, access)
            if scoped is None:
                return []
            where.append(scoped)
            held: dict[int, Any] = {}
            columns = (
                records.c.id,
                records.c.test_case,
                records.c.cycle,
                records.c.status,
                records.c.fields_json,
                records.c.modified_at,
            )
            for part in chunked(sorted(set(test_cases))):
                query = select(*columns).where(*where, records.c.test_case.in_(part))
                for row in (await session.execute(query)).all():
                    counted = held.get(row.test_case)
                    if counted is None:
                        held[row.test_case] = [row, 1]
                    else:
                        counted[1] += 1
                        if _newer(row, counted[0]):
                            counted[0] = row
        found = []
        for case in dict.fromkeys(test_cases):
            if case not in held:
                continue
            row, count = held[case]
            date = json.loads(row.fields_json or "{}").get("executionDate")
            found.append(Latest(case, row.id, row.status or NOT_RUN, date, row.cycle, count))
        return found

    async def _scoped(self, session: Any, scope: Scope, access: Any) -> ColumnElement[bool] | None:
        """The condition on runs that ``scope`` names; None when no run can be in it."""
        for kind, wanted, column in (
            (CYCLE, scope.cycle, records.c.cycle),
            (PLAN, scope.plan, records.c.plan),
        ):
            if wanted is None:
                continue
            project = await session.scalar(
                select(records.c.project).where(records.c.id == wanted, records.c.kind == kind)
            )
            noun = "test cycle" if kind == CYCLE else "test plan"
            if project is None:
                raise NotFound(f"No {noun} with id {wanted}.")
            access.require(Action.READ, int(project), f"{noun} {wanted}")
            return column == wanted
        if scope.release is not None:
            plans = await self._plans_of_release(session, scope.release, access)
            return records.c.plan.in_(plans) if plans else None
        return true()

    async def _plans_of_release(self, session: Any, release: int, access: Any) -> list[int]:
        """The readable test plans whose ``release`` field is ``release``."""
        query = select(records.c.id, records.c.fields_json).where(
            records.c.kind == PLAN, readable_where(access, records.c.project)
        )
        return [
            int(r.id)
            for r in (await session.execute(query)).all()
            if json.loads(r.fields_json or "{}").get("release") == release
        ]
