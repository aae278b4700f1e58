"""Test cases, plans, groups, cycles and runs over HTTP: the helpers of the test
management e2e modules, and of the attachments, history and system modules that need
test records.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.e2e.api import created_id, ids_of

STATUSES = ("NOT_RUN", "PASSED", "FAILED", "BLOCKED", "INPROGRESS")


def steps(*actions: str) -> list[dict[str, str]]:
    """Test case steps, one per action."""
    return [
        {"action": action, "expectedResult": f"{action} works", "notes": f"about {action}"}
        for action in actions
    ]


def new_test_case(
    admin: httpx.Client,
    project: dict[str, Any],
    name: str,
    case_steps: list[dict[str, str]] | None = None,
    **fields: object,
) -> int:
    """A test case (item type TC) in ``project`` (the ``project`` fixture's shape)."""
    body: dict[str, Any] = {"name": name, **fields}
    if case_steps is not None:
        body["testCaseSteps"] = case_steps
    response = admin.post(
        "/items",
        json={"project": project["id"], "itemType": project["types"]["TC"]["id"], "fields": body},
    )
    return created_id(response)


def new_plan(
    admin: httpx.Client, project: dict[str, Any], name: str = "Plan", **fields: object
) -> int:
    """A test plan in ``project``."""
    body = {"project": project["id"], "fields": {"name": name, **fields}}
    return created_id(admin.post("/testplans", json=body))


def default_group(admin: httpx.Client, plan: int) -> int:
    """The test group a new plan starts with."""
    [group] = ids_of(admin.get(f"/testplans/{plan}/testgroups"))
    return group


def new_group(admin: httpx.Client, plan: int, name: str, *cases: int) -> int:
    """A test group of ``plan`` holding ``cases`` in that order."""
    group = created_id(admin.post(f"/testplans/{plan}/testgroups", json={"name": name}))
    add_cases(admin, plan, group, *cases)
    return group


def add_cases(admin: httpx.Client, plan: int, group: int, *cases: int) -> None:
    """Adds test cases to a group, in order."""
    for case in cases:
        response = admin.post(
            f"/testplans/{plan}/testgroups/{group}/testcases", json={"testCase": case}
        )
        assert created_id(response) == case


def cycle_fields(
    name: str = "Cycle", start: str = "2024-03-01", end: str = "2024-03-31"
) -> dict[str, str]:
    """A test cycle's required fields."""
    return {"name": name, "startDate": start, "endDate": end}


def new_cycle(
    admin: httpx.Client, plan: int, config: dict[str, Any] | None = None, name: str = "Cycle"
) -> int:
    """A test cycle of ``plan`` (its runs generated with ``config``)."""
    body: dict[str, Any] = {"fields": cycle_fields(name)}
    if config is not None:
        body["testRunGenerationConfig"] = config
    return created_id(admin.post(f"/testplans/{plan}/testcycles", json=body))


def runs_of(admin: httpx.Client, cycle: int) -> list[dict[str, Any]]:
    """Every run of a cycle, in the cycle's order."""
    response = admin.get(f"/testcycles/{cycle}/testruns", params={"maxResults": 50})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["pageInfo"]["totalResults"] == len(body["data"])
    return list(body["data"])


def run_of(admin: httpx.Client, run: int) -> dict[str, Any]:
    """A test run's ``data``."""
    response = admin.get(f"/testruns/{run}")
    assert response.status_code == 200, response.text
    return dict(response.json()["data"])


def record(admin: httpx.Client, run: int, **fields: object) -> httpx.Response:
    """PUTs execution fields to a run."""
    return admin.put(f"/testruns/{run}", json={"fields": fields})


def with_step_statuses(run: dict[str, Any], *statuses: str) -> list[dict[str, Any]]:
    """The run's steps with each step's status set, in order."""
    run_steps = [dict(step) for step in run["fields"]["testRunSteps"]]
    assert len(run_steps) == len(statuses)
    for step, status in zip(run_steps, statuses, strict=True):
        step["status"] = status
    return run_steps


def patch_fields_at_once(admin: httpx.Client, url: str, values: Mapping[str, object]) -> list[int]:
    """A PATCH of ``url`` per field of ``values``, all sent at the same moment (each on its
    own thread, released together): their statuses."""
    barrier = threading.Barrier(len(values))

    def add(field: str, value: object) -> int:
        barrier.wait()
        patch = [{"op": "add", "path": f"/fields/{field}", "value": value}]
        return admin.patch(url, json=patch).status_code

    with ThreadPoolExecutor(max_workers=len(values)) as pool:
        return list(pool.map(add, values, values.values()))
