"""The activity feed records test plans, cycles, runs and results, right after they change."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_cycle,
    new_plan,
    new_test_case,
    record,
    runs_of,
)


def _feed(admin: httpx.Client, project: int, *object_types: str) -> list[dict[str, Any]]:
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("project", project),
        ("maxResults", 50),
    ]
    params += [("objectType", t) for t in object_types]
    response = admin.get("/activities", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["data"])


def test_test_records_and_results_in_the_feed(admin: httpx.Client, project: dict[str, Any]) -> None:
    case = new_test_case(admin, project, "Checkout")
    plan = new_plan(admin, project, "Release 3")
    add_cases(admin, plan, default_group(admin, plan), case)
    cycle = new_cycle(admin, plan, name="Sprint 9")
    [run] = runs_of(admin, cycle)
    assert record(admin, run["id"], testRunStatus="FAILED").status_code == 200

    pid = project["id"]
    plans = _feed(admin, pid, "TEST_PLAN")
    assert {(a["eventType"], a["item"]) for a in plans} >= {("CREATE", plan), ("UPDATE", plan)}
    assert any("Release 3" in a["details"] for a in plans)
    [made] = _feed(admin, pid, "TEST_CYCLE")
    assert (made["eventType"], made["item"]) == ("CREATE", cycle)
    assert "Sprint 9" in made["details"]
    # A cycle's generated runs are told by the cycle's activity, not one each.
    assert _feed(admin, pid, "TEST_RUN") == []
    [result] = _feed(admin, pid, "TEST_RESULT")
    assert (result["eventType"], result["item"]) == ("UPDATE", run["id"])

    assert admin.delete(f"/testruns/{run['id']}").status_code == 204
    [gone] = _feed(admin, pid, "TEST_RUN")
    assert (gone["eventType"], gone["item"]) == ("DELETE", run["id"])
    assert admin.delete(f"/testcycles/{cycle}").status_code == 204
    assert [a["eventType"] for a in _feed(admin, pid, "TEST_CYCLE")] == ["DELETE", "CREATE"]
