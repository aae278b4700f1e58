"""Making test runs: which runs a cycle wants, a run made from a test case, and the
status a run's steps give it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.context import Principal
from plumbline.common.errors import InvalidArgument
from plumbline.services.testmgmt.models import group_cases, records, test_groups
from plumbline.services.testmgmt.remote import TestCase
from plumbline.services.testmgmt.store import CYCLE, RUN, new_record

#: testRunStatus values, as the contract's clients know them.
STATUSES = ("NOT_RUN", "PASSED", "FAILED", "BLOCKED", "INPROGRESS")
NOT_RUN = "NOT_RUN"


@dataclass(frozen=True)
class Config:
    """testRunGenerationConfig: ``None`` means every group, or every status."""

    groups: tuple[int, ...] | None = None
    statuses: tuple[str, ...] | None = None

    def to_json(self) -> str:
        """The stored form, with the members that were given."""
        body: dict[str, list[Any]] = {}
        if self.groups is not None:
            body["testGroupsToInclude"] = list(self.groups)
        if self.statuses is not None:
            body["testRunStatusesToInclude"] = list(self.statuses)
        return json.dumps(body)


def parse_config(raw: Any) -> Config:
    """A testRunGenerationConfig object (``{}`` and ``null`` mean everything)."""
    if raw is None:
        return Config()
    if not isinstance(raw, dict):
        raise InvalidArgument("testRunGenerationConfig must be a JSON object.")
    groups = raw.get("testGroupsToInclude")
    statuses = raw.get("testRunStatusesToInclude")
    if groups is not None and (
        not isinstance(groups, list)
        or not all(isinstance(g, int) and not isinstance(g, bool) for g in groups)
    ):
        raise InvalidArgument("testRunGenerationConfig.testGroupsToInclude must be a list of ids.")
    if statuses is not None:
        if not isinstance(statuses, list):
            raise InvalidArgument(
                "testRunGenerationConfig.testRunStatusesToInclude must be a list of statuses."
            )
        for status in statuses:
            check_status(status, "testRunGenerationConfig.testRunStatusesToInclude")
    return Config(
        tuple(dict.fromkeys(groups)) if groups is not None else None,
        tuple(dict.fromkeys(statuses)) if statuses is not None else None,
    )


def check_status(value: Any, name: str) -> str:
    """One of ``STATUSES`` or a 400 that lists them."""
    if value not in STATUSES:
        raise InvalidArgument(
            f"{name}: {value!r} is not a test run status; allowed: {', '.join(STATUSES)}."
        )
    return str(value)


def derive(steps: list[dict[str, Any]]) -> str:
    """A run's status from its steps: any FAILED, else any BLOCKED; all PASSED; some set
    gives INPROGRESS; none NOT_RUN."""
    statuses = [s.get("status") or NOT_RUN for s in steps]
    if "FAILED" in statuses:
        return "FAILED"
    if "BLOCKED" in statuses:
        return "BLOCKED"
    if statuses and all(s == "PASSED" for s in statuses):
        return "PASSED"
    if any(s != NOT_RUN for s in statuses):
        return "INPROGRESS"
    return NOT_RUN


def run_steps(case: TestCase) -> list[dict[str, Any]]:
    """``testRunSteps``: the test case's steps, each with a status and a result."""
    steps = case.fields.get("testCaseSteps") or []
    return [
        {
            "action": s.get("action", ""),
            "expectedResult": s.get("expectedResult", ""),
            "notes": s.get("notes", ""),
            "status": NOT_RUN,
            "result": "",
        }
        for s in steps
        if isinstance(s, dict)
    ]


@dataclass(frozen=True)
class Wanted:
    """A run a cycle should have: a test case in a group, at its place there."""

    group: int
    test_case: int
    sort_order: int
    assigned_to: int | None


async def wanted_runs(
    session: AsyncSession, plan: int, cycle: int | None, config: Config
) -> list[Wanted]:
    """The runs ``config`` asks for, in group order then case order.

    ``testRunStatusesToInclude`` keeps the cases whose run in the plan's previous cycle
    (the newest cycle older than ``cycle``) has one of the statuses.
    """
    groups = (
        await session.execute(
            select(test_groups)
            .where(test_groups.c.plan == plan)
            .order_by(test_groups.c.sort_order, test_groups.c.id)
        )
    ).all()
    if config.groups is not None:
        known = {g.id for g in groups}
        unknown = [g for g in config.groups if g not in known]
        if unknown:
            raise InvalidArgument(
                "testRunGenerationConfig.testGroupsToInclude: "
                f"{', '.join(map(str, unknown))} {'is' if len(unknown) == 1 else 'are'} not "
                f"a test group of test plan {plan}; its groups are: "
                f"{', '.join(str(g.id) for g in groups) or 'none'}."
            )
        groups = [g for g in groups if g.id in set(config.groups)]
    previous = await _previous_statuses(session, plan, cycle) if config.statuses else None
    wanted: list[Wanted] = []
    for group in groups:
        cases = (
            await session.scalars(
                select(group_cases.c.test_case)
                .where(group_cases.c.test_group == group.id)
                .order_by(group_cases.c.sort_order, group_cases.c.test_case)
            )
        ).all()
        for order, case in enumerate(cases):
            if previous is not None and config.statuses is not None:
                status = previous.get((group.id, case), previous.get((0, case)))
                if status not in config.statuses:
                    continue
            wanted.append(Wanted(group.id, int(case), order, group.assigned_to))
    return wanted


async def _previous_statuses(
    session: AsyncSession, plan: int, cycle: int | None
) -> dict[tuple[int, int], str]:
    """(group, test case) and (0, test case) to its status in the previous cycle: the
    newest created before ``cycle`` (or the newest, for a new cycle)."""
    cycles = (
        await session.scalars(
            select(records.c.id)
            .where(records.c.kind == CYCLE, records.c.plan == plan)
            .order_by(records.c.created_at, records.c.id)
        )
    ).all()
    before = cycles[: cycles.index(cycle)] if cycle in cycles else cycles
    previous = before[-1] if before else None
    if previous is None:
        raise InvalidArgument(
            "testRunGenerationConfig.testRunStatusesToInclude needs a previous test cycle; "
            f"test plan {plan} has none before this one."
        )
    statuses: dict[tuple[int, int], str] = {}
    for row in (
        await session.execute(
            select(records.c.test_group, records.c.test_case, records.c.status).where(
                records.c.kind == RUN, records.c.cycle == previous
            )
        )
    ).all():
        statuses[(row.test_group, row.test_case)] = row.status
        statuses.setdefault((0, row.test_case), row.status)
    return statuses


def run_row(
    *,
    run_id: int,
    key: str,
    item_type: int,
    plan: Row[Any],
    cycle: int,
    wanted: Wanted,
    case: TestCase,
    caller: Principal,
    now: datetime,
) -> dict[str, Any]:
    """The insert values of a new run of ``case`` in ``cycle``."""
    fields: dict[str, Any] = {
        "name": case.fields.get("name", ""),
        "testRunSteps": run_steps(case),
    }
    if case.fields.get("description"):
        fields["description"] = case.fields["description"]
    if wanted.assigned_to is not None:
        fields["assignedTo"] = wanted.assigned_to
    return {
        **new_record(run_id, RUN, plan.project, item_type, key, "TSTRN", fields, caller, now),
        "plan": plan.id,
        "cycle": cycle,
        "test_case": case.id,
        "test_group": wanted.group,
        "sort_order": wanted.sort_order,
        "test_case_version": case.version,
        "status": NOT_RUN,
        "generation_json": None,
        "locked_by": None,
        "last_locked_at": None,
    }
