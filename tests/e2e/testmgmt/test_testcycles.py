"""Test cycles over HTTP: their dates, and the test runs they generate and regenerate."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from py_jama_rest_client.client import JamaClient

from tests.e2e.api import assert_error, created_id, ids_of, total_of
from tests.e2e.testrecords import (
    add_cases,
    cycle_fields,
    default_group,
    new_cycle,
    new_group,
    new_plan,
    new_test_case,
    patch_fields_at_once,
    record,
    runs_of,
    steps,
    with_step_statuses,
)
from tests.e2e.topology import System


@pytest.fixture
def plan(admin: httpx.Client, project: dict[str, Any]) -> dict[str, Any]:
    """A plan with two groups: the default one holds cases a and b (a has two steps), the
    second one case c."""
    plan_id = new_plan(admin, project)
    a = new_test_case(admin, project, "Case a", steps("Open", "Close"), description="<p>a</p>")
    b = new_test_case(admin, project, "Case b", steps("Look"))
    c = new_test_case(admin, project, "Case c")
    first = default_group(admin, plan_id)
    add_cases(admin, plan_id, first, a, b)
    second = new_group(admin, plan_id, "Second", c)
    return {"id": plan_id, "groups": [first, second], "cases": {"a": a, "b": b, "c": c}}


def test_cycle_dates_are_checked(admin: httpx.Client, plan: dict[str, Any]) -> None:
    url = f"/testplans/{plan['id']}/testcycles"
    for missing in ("startDate", "endDate"):
        fields = cycle_fields()
        del fields[missing]
        assert_error(admin.post(url, json={"fields": fields}), 400, missing)
    bad = admin.post(url, json={"fields": cycle_fields(start="03/01/2024")})
    assert_error(bad, 400, "startDate")
    backwards = admin.post(url, json={"fields": cycle_fields(start="2024-03-10", end="2024-03-01")})
    assert_error(backwards, 400, "endDate")
    assert_error(
        admin.post(url, json={"fields": {"startDate": "2024-03-01", "endDate": "2024-03-02"}}),
        400,
        "name",
    )
    assert total_of(admin.get(url)) == 0


def test_a_cycle_generates_a_run_per_case_in_group_order(
    admin: httpx.Client, project: dict[str, Any], plan: dict[str, Any]
) -> None:
    response = admin.post(
        f"/testplans/{plan['id']}/testcycles",
        json={"fields": cycle_fields("Sprint 1"), "testRunGenerationConfig": {}},
    )
    cycle = created_id(response)
    assert response.json()["meta"]["location"].endswith(f"/rest/v1/testcycles/{cycle}")
    data = admin.get(f"/testcycles/{cycle}").json()["data"]
    assert data["type"] == "testcycles"
    assert data["id"] == cycle
    assert data["itemType"] == project["types"]["TSTCY"]["id"]
    assert data["documentKey"].startswith(f"{project['key']}-TSTCY-")
    assert (data["fields"]["name"], data["fields"]["startDate"], data["fields"]["endDate"]) == (
        "Sprint 1",
        "2024-03-01",
        "2024-03-31",
    )
    listed = admin.get(f"/testplans/{plan['id']}/testcycles")
    assert ids_of(listed) == [cycle]
    assert listed.json()["data"][0]["type"] == "testcycles"

    runs = runs_of(admin, cycle)
    cases, (first, second) = plan["cases"], plan["groups"]
    assert [r["fields"]["testCase"] for r in runs] == [cases["a"], cases["b"], cases["c"]]
    assert [r["testGroup"] for r in runs] == [
        [plan["id"], first],
        [plan["id"], first],
        [plan["id"], second],
    ]
    assert runs[0]["sortOrderFromTestGroup"] < runs[1]["sortOrderFromTestGroup"]
    case_a = admin.get(f"/items/{cases['a']}").json()["data"]
    run = runs[0]
    assert run["type"] == "testruns"
    assert run["itemType"] == project["types"]["TSTRN"]["id"]
    assert run["documentKey"].startswith(f"{project['key']}-TSTRN-")
    assert run["fields"]["name"] == "Case a"
    assert run["fields"]["description"] == "<p>a</p>"
    assert (run["fields"]["testCycle"], run["fields"]["testPlan"]) == (cycle, plan["id"])
    assert run["fields"]["testRunStatus"] == "NOT_RUN"
    assert run["testCaseVersionNumber"] >= 1
    run_steps = run["fields"]["testRunSteps"]
    case_steps = case_a["fields"]["testCaseSteps"]
    assert len(run_steps) == len(case_steps) == 2
    for run_step, case_step in zip(run_steps, case_steps, strict=True):
        assert {k: run_step[k] for k in ("action", "expectedResult", "notes")} == case_step
        assert "status" in run_step
        assert "result" in run_step
    assert runs[2]["fields"].get("testRunSteps") in (None, [])

    group = admin.get(f"/testcycles/{cycle}/testgroup/{second}").json()["data"]
    assert group == {
        "testGroup": second,
        "name": "Second",
        "testCycle": cycle,
        "type": "testcycletestgroups",
    }
    other_plan = new_plan(admin, project, "Other")
    assert_error(
        admin.get(f"/testcycles/{cycle}/testgroup/{default_group(admin, other_plan)}"), 404
    )


def test_groups_to_include(
    admin: httpx.Client, project: dict[str, Any], plan: dict[str, Any]
) -> None:
    second = plan["groups"][1]
    cycle = new_cycle(admin, plan["id"], {"testGroupsToInclude": [second]})
    assert [r["fields"]["testCase"] for r in runs_of(admin, cycle)] == [plan["cases"]["c"]]
    theirs = default_group(admin, new_plan(admin, project, "Other"))
    stranger = admin.post(
        f"/testplans/{plan['id']}/testcycles",
        json={
            "fields": cycle_fields(),
            "testRunGenerationConfig": {"testGroupsToInclude": [theirs]},
        },
    )
    assert_error(stranger, 400, "testGroupsToInclude")


def test_statuses_to_include_follow_the_previous_cycle(
    admin: httpx.Client, plan: dict[str, Any]
) -> None:
    config = {"testRunStatusesToInclude": ["FAILED", "NOT_RUN"]}
    first_time = admin.post(
        f"/testplans/{plan['id']}/testcycles",
        json={"fields": cycle_fields(), "testRunGenerationConfig": config},
    )
    assert_error(first_time, 400, "testRunStatusesToInclude")
    first = new_cycle(admin, plan["id"])
    a, b, _c = runs_of(admin, first)
    assert (
        record(admin, a["id"], testRunSteps=with_step_statuses(a, "PASSED", "PASSED")).status_code
        == 200
    )
    assert record(admin, b["id"], testRunSteps=with_step_statuses(b, "FAILED")).status_code == 200
    second = new_cycle(admin, plan["id"], config, name="Retest")
    cases = plan["cases"]
    assert [r["fields"]["testCase"] for r in runs_of(admin, second)] == [cases["b"], cases["c"]]
    unknown = admin.post(
        f"/testplans/{plan['id']}/testcycles",
        json={
            "fields": cycle_fields(),
            "testRunGenerationConfig": {"testRunStatusesToInclude": ["MAYBE"]},
        },
    )
    assert_error(unknown, 400, "testRunStatusesToInclude")


def test_put_regenerates_and_keeps_results(
    admin: httpx.Client, project: dict[str, Any], plan: dict[str, Any]
) -> None:
    cycle = new_cycle(admin, plan["id"])
    a, b, c = runs_of(admin, cycle)
    assert (
        record(admin, a["id"], testRunSteps=with_step_statuses(a, "PASSED", "PASSED")).status_code
        == 200
    )
    d = new_test_case(admin, project, "Case d")
    add_cases(admin, plan["id"], plan["groups"][1], d)
    put = admin.put(f"/testcycles/{cycle}", json={"fields": cycle_fields("Sprint 1b")})
    assert put.status_code == 200
    assert put.json()["meta"]["status"] == "OK"
    runs = runs_of(admin, cycle)
    assert [r["fields"]["testCase"] for r in runs] == [*plan["cases"].values(), d]
    assert [r["id"] for r in runs[:3]] == [a["id"], b["id"], c["id"]]
    assert runs[0]["fields"]["testRunStatus"] == "PASSED"
    assert admin.get(f"/testcycles/{cycle}").json()["data"]["fields"]["name"] == "Sprint 1b"

    # A PUT of a config narrows the runs to what it asks for.
    only_first = {"testGroupsToInclude": [plan["groups"][0]]}
    narrowed = admin.put(
        f"/testcycles/{cycle}",
        json={"fields": cycle_fields("Sprint 1c"), "testRunGenerationConfig": only_first},
    )
    assert narrowed.status_code == 200, narrowed.text
    assert [r["id"] for r in runs_of(admin, cycle)] == [a["id"], b["id"]]

    patch = [{"op": "replace", "path": "/fields/name", "value": "Patched"}]
    assert admin.patch(f"/testcycles/{cycle}", json=patch).status_code == 200
    assert admin.get(f"/testcycles/{cycle}").json()["data"]["fields"]["name"] == "Patched"
    assert [r["id"] for r in runs_of(admin, cycle)] == [a["id"], b["id"]]
    bad_date = [{"op": "replace", "path": "/fields/endDate", "value": "2020-01-01"}]
    assert_error(admin.patch(f"/testcycles/{cycle}", json=bad_date), 400, "endDate")
    assert_error(admin.put(f"/testcycles/{cycle}", json={"fields": {"name": "No dates"}}), 400)


def test_a_cycle_carries_its_plan_in_fields_and_links_it(
    admin: httpx.Client, plan: dict[str, Any]
) -> None:
    cycle = new_cycle(admin, plan["id"], name="Sprint 9")
    include = {"include": "data.fields.testPlan"}
    listed = admin.get(f"/testplans/{plan['id']}/testcycles", params=include)
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert [c["fields"]["testPlan"] for c in body["data"]] == [plan["id"]]
    link = body["links"]["data.fields.testPlan"]
    assert link["type"] == "testplans"
    assert link["href"].endswith("/testplans/{data.fields.testPlan}")
    assert body["linked"]["testplans"][str(plan["id"])]["type"] == "testplans"
    one = admin.get(f"/testcycles/{cycle}", params=include).json()
    assert one["data"]["fields"]["testPlan"] == plan["id"]
    assert set(one["linked"]["testplans"]) == {str(plan["id"])}
    found = admin.get(f"/abstractitems/{cycle}", params=include).json()
    assert found["data"]["fields"]["testPlan"] == plan["id"]
    assert set(found["linked"]["testplans"]) == {str(plan["id"])}

    # A GET's fields PUT back keep testPlan, which is shown, not set: the plan stays.
    fields = {**one["data"]["fields"], "name": "Sprint 9b", "testPlan": plan["id"] + 1000}
    put = admin.put(f"/testcycles/{cycle}", json={"fields": fields})
    assert put.status_code == 200, put.text
    again = admin.get(f"/testcycles/{cycle}").json()["data"]["fields"]
    assert (again["name"], again["testPlan"]) == ("Sprint 9b", plan["id"])


def test_deleting_a_cycle_deletes_its_runs(admin: httpx.Client, plan: dict[str, Any]) -> None:
    cycle = new_cycle(admin, plan["id"])
    runs = runs_of(admin, cycle)
    deleted = admin.delete(f"/testcycles/{cycle}")
    assert deleted.status_code == 204
    assert not deleted.content
    assert_error(admin.get(f"/testcycles/{cycle}"), 404, str(cycle))
    for run in runs:
        assert_error(admin.get(f"/testruns/{run['id']}"), 404)
    gone = admin.get("/testruns", params={"testCycle": cycle})
    assert ids_of(gone) == []
    assert total_of(gone) == 0
    assert total_of(admin.get(f"/testplans/{plan['id']}/testcycles")) == 0


def test_the_public_client_creates_cycles_and_records_results(
    system: System, admin: httpx.Client, plan: dict[str, Any]
) -> None:
    """py-jama-rest-client sends ``testRunGenerationConfig: {}`` and a raw JSON string body
    for ``put_test_run``."""
    logging.getLogger("py_jama_rest_client").setLevel(logging.CRITICAL)
    jama = JamaClient(system.url, credentials=("admin", system.admin_password))
    cycle = jama.post_testplans_testcycles(
        plan["id"], "From the client", "2024-04-01", "2024-04-30"
    )
    assert isinstance(cycle, int)
    runs = jama.get_testruns(cycle)
    assert [r["fields"]["testCase"] for r in runs] == list(plan["cases"].values())
    third = runs[2]["id"]
    jama.put_test_run(third, data=json.dumps({"fields": {"testRunStatus": "PASSED"}}))
    assert admin.get(f"/testruns/{third}").json()["data"]["fields"]["testRunStatus"] == "PASSED"


def test_concurrent_patches_of_one_cycle_all_land(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    """Rounds of four PATCHes at once, each another field of one cycle: none is lost to
    another's write (the cycle's version is checked under the lock, and retried)."""
    cycle = new_cycle(admin, new_plan(admin, project))
    for n in range(1, 9):
        wanted = {
            "name": f"Sprint {n}",
            "description": f"Round {n}",
            "startDate": f"2024-03-0{n}",
            "endDate": f"2024-04-0{n}",
        }
        assert patch_fields_at_once(admin, f"/testcycles/{cycle}", wanted) == [200] * 4
        fields = admin.get(f"/testcycles/{cycle}").json()["data"]["fields"]
        assert {k: fields[k] for k in wanted} == wanted
