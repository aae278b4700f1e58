"""Test runs over HTTP: finding them, recording results one by one and in bulk, refreshing
a run from its test case, include, /abstractitems, and who may record results."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.e2e.api import (
    MATRIX_ROLES,
    Team,
    assert_answers,
    assert_error,
    created_id,
    ids_of,
    total_of,
)
from tests.e2e.testrecords import (
    STATUSES,
    add_cases,
    default_group,
    new_cycle,
    new_plan,
    new_test_case,
    record,
    run_of,
    runs_of,
    steps,
    with_step_statuses,
)


@pytest.fixture
def runs(admin: httpx.Client, project: dict[str, Any]) -> dict[str, Any]:
    """A plan with one cycle of two runs: ``stepped`` (three steps) and ``plain`` (none)."""
    plan = new_plan(admin, project)
    stepped = new_test_case(admin, project, "Stepped", steps("One", "Two", "Three"))
    plain = new_test_case(admin, project, "Plain")
    add_cases(admin, plan, default_group(admin, plan), stepped, plain)
    cycle = new_cycle(admin, plan)
    first, second = runs_of(admin, cycle)
    return {
        "plan": plan,
        "cycle": cycle,
        "cases": {"stepped": stepped, "plain": plain},
        "stepped": first["id"],
        "plain": second["id"],
    }


def _search(admin: httpx.Client, *params: tuple[str, int | str]) -> list[int]:
    return ids_of(admin.get("/testruns", params=[*params, ("maxResults", 50)]))


def test_search_rules(admin: httpx.Client, project: dict[str, Any]) -> None:
    one, two = (new_test_case(admin, project, f"Case {n}") for n in (1, 2))
    plan_a, plan_b = new_plan(admin, project, "A"), new_plan(admin, project, "B")
    add_cases(admin, plan_a, default_group(admin, plan_a), one, two)
    add_cases(admin, plan_b, default_group(admin, plan_b), one)
    cycle_a, cycle_b = new_cycle(admin, plan_a), new_cycle(admin, plan_b)
    a1, a2 = (r["id"] for r in runs_of(admin, cycle_a))
    [b1] = (r["id"] for r in runs_of(admin, cycle_b))

    # Ids come from each testmgmt replica's own block: compare them as sets.
    assert set(_search(admin, ("testCycle", cycle_a))) == {a1, a2}
    assert set(_search(admin, ("testCycle", cycle_a), ("testCycle", cycle_b))) == {a1, a2, b1}
    assert set(_search(admin, ("testCase", one))) == {a1, b1}
    assert _search(admin, ("testCycle", cycle_a), ("testCase", one)) == [a1]
    assert _search(admin, ("testPlan", plan_b)) == [b1]
    assert _search(admin, ("testPlan", plan_b), ("testCase", two)) == []
    # An id of another kind is no error and matches nothing.
    assert _search(admin, ("testCycle", plan_a)) == []
    assert _search(admin, ("testCase", cycle_a)) == []
    nothing = admin.get("/testruns")
    assert ids_of(nothing) == []
    assert total_of(nothing) == 0

    ascending = _search(admin, ("testCycle", cycle_a))
    keys = [run_of(admin, r)["documentKey"] for r in ascending]
    assert keys == sorted(keys)
    assert _search(admin, ("testCycle", cycle_a), ("sortBy", "documentKey.desc")) == ascending[::-1]
    assert _search(admin, ("testCycle", cycle_a), ("sortBy", "id.desc")) == sorted(ascending)[::-1]
    assert_error(
        admin.get("/testruns", params={"testCycle": cycle_a, "sortBy": "colour.asc"}), 400, "sortBy"
    )
    assert_error(admin.get("/testruns", params={"testCycle": "x"}), 400, "testCycle")
    page = admin.get("/testruns", params={"testPlan": plan_a, "maxResults": 1, "startAt": 1})
    assert len(ids_of(page)) == 1
    assert total_of(page) == 2


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (("PASSED", "FAILED", "BLOCKED"), "FAILED"),
        (("PASSED", "BLOCKED", "NOT_RUN"), "BLOCKED"),
        (("PASSED", "PASSED", "PASSED"), "PASSED"),
        (("PASSED", "NOT_RUN", "NOT_RUN"), "INPROGRESS"),
        (("NOT_RUN", "NOT_RUN", "NOT_RUN"), "NOT_RUN"),
    ],
)
def test_step_statuses_decide_the_run_status(
    admin: httpx.Client, runs: dict[str, Any], statuses: tuple[str, ...], expected: str
) -> None:
    run = run_of(admin, runs["stepped"])
    assert run["fields"].get("executionDate") in (None, "")
    put = record(
        admin, run["id"], testRunSteps=with_step_statuses(run, *statuses), testRunStatus="PASSED"
    )
    assert put.status_code == 200
    assert put.json()["meta"]["status"] == "OK"
    after = run_of(admin, run["id"])
    assert after["fields"]["testRunStatus"] == expected
    assert [s["status"] for s in after["fields"]["testRunSteps"]] == list(statuses)
    assert [s["action"] for s in after["fields"]["testRunSteps"]] == ["One", "Two", "Three"]
    if expected != "NOT_RUN":
        assert after["fields"]["executionDate"], "a recorded result has its date"


def test_step_results_and_unknown_statuses(admin: httpx.Client, runs: dict[str, Any]) -> None:
    run = run_of(admin, runs["stepped"])
    run_steps = with_step_statuses(run, "FAILED", "NOT_RUN", "NOT_RUN")
    run_steps[0]["result"] = "Crashed"
    assert (
        record(admin, run["id"], testRunSteps=run_steps, actualResults="<p>boom</p>").status_code
        == 200
    )
    after = run_of(admin, run["id"])["fields"]
    assert after["testRunSteps"][0]["result"] == "Crashed"
    assert after["actualResults"] == "<p>boom</p>"
    unknown = record(
        admin, run["id"], testRunSteps=with_step_statuses(run, "MAYBE", "PASSED", "PASSED")
    )
    assert_error(unknown, 400, "MAYBE", *STATUSES)
    assert run_of(admin, run["id"])["fields"]["testRunStatus"] == "FAILED"


def test_a_run_without_steps_takes_the_status_sent(
    admin: httpx.Client, runs: dict[str, Any]
) -> None:
    run = runs["plain"]
    assert record(admin, run, testRunStatus="BLOCKED", actualResults="waiting").status_code == 200
    fields = run_of(admin, run)["fields"]
    assert (fields["testRunStatus"], fields["actualResults"]) == ("BLOCKED", "waiting")
    assert fields["executionDate"]
    assert_error(record(admin, run, testRunStatus="DONE"), 400, "DONE", *STATUSES)
    patch = [{"op": "replace", "path": "/fields/testRunStatus", "value": "PASSED"}]
    patched = admin.patch(f"/testruns/{run}", json=patch)
    assert patched.status_code == 200
    assert patched.json()["meta"]["status"] == "OK"
    assert run_of(admin, run)["fields"]["testRunStatus"] == "PASSED"
    assert_error(
        admin.patch(f"/testruns/{run}", json=[{"op": "replace", "path": "/nope", "value": 1}]), 400
    )
    assert_error(admin.patch(f"/testruns/{run}", json={"op": "replace"}), 400, "array")


def test_read_only_fields_are_ignored(admin: httpx.Client, runs: dict[str, Any]) -> None:
    """A whole GET data object PUT back, read-only fields changed: only results change."""
    before = run_of(admin, runs["plain"])
    changed = dict(before)
    changed["documentKey"] = "HACKED-1"
    changed["testCaseVersionNumber"] = 99
    changed["testGroup"] = [1, 2]
    changed["somethingNew"] = {"x": 1}
    changed["fields"] = {
        **before["fields"],
        "testCase": runs["cases"]["stepped"],
        "testCycle": 1,
        "executionDate": "1999-01-01",
        "testRunStatus": "PASSED",
        "actualResults": "fine",
    }
    assert admin.put(f"/testruns/{runs['plain']}", json=changed).status_code == 200
    after = run_of(admin, runs["plain"])
    for member in ("documentKey", "testCaseVersionNumber", "testGroup", "itemType", "project"):
        assert after[member] == before[member], member
    for field in ("testCase", "testCycle", "testPlan", "name"):
        assert after["fields"][field] == before["fields"][field], field
    assert after["fields"]["executionDate"] != "1999-01-01"
    assert (after["fields"]["testRunStatus"], after["fields"]["actualResults"]) == (
        "PASSED",
        "fine",
    )


def test_updated_test_case_makes_a_new_run(
    admin: httpx.Client, project: dict[str, Any], runs: dict[str, Any]
) -> None:
    old = run_of(admin, runs["stepped"])
    case = runs["cases"]["stepped"]
    new_steps = steps("One", "Two", "Three", "Four")
    changed = admin.put(
        f"/items/{case}", json={"fields": {"name": "Stepped v2", "testCaseSteps": new_steps}}
    )
    assert changed.status_code == 200, changed.text
    response = admin.post(f"/testruns/{old['id']}/updatedtestcase")
    new = created_id(response)
    assert new != old["id"]
    assert response.json()["meta"]["location"].endswith(f"/testruns/{new}")
    run = run_of(admin, new)
    assert run["fields"]["name"] == "Stepped v2"
    assert len(run["fields"]["testRunSteps"]) == 4
    assert run["testCaseVersionNumber"] > old["testCaseVersionNumber"]
    for member in ("testCycle", "testPlan", "testCase"):
        assert run["fields"][member] == old["fields"][member], member
    assert run["testGroup"] == old["testGroup"]
    assert new in [r["id"] for r in runs_of(admin, runs["cycle"])]
    assert_error(admin.get(f"/testruns/{old['id']}"), 404)


def test_runs_of_an_unknown_cycle_are_not_found(admin: httpx.Client, runs: dict[str, Any]) -> None:
    assert_error(admin.get(f"/testcycles/{runs['plan']}/testruns"), 404, str(runs["plan"]))


def test_delete_a_run(admin: httpx.Client, runs: dict[str, Any]) -> None:
    deleted = admin.delete(f"/testruns/{runs['plain']}")
    assert deleted.status_code == 204
    assert not deleted.content
    assert_error(admin.get(f"/testruns/{runs['plain']}"), 404, str(runs["plain"]))
    assert [r["id"] for r in runs_of(admin, runs["cycle"])] == [runs["stepped"]]
    assert_error(admin.delete(f"/testruns/{runs['plain']}"), 404)
    assert_error(admin.get(f"/testruns/{runs['cycle']}"), 404)


def test_bulk_results(admin: httpx.Client, labs: httpx.Client, runs: dict[str, Any]) -> None:
    plain, stepped = runs["plain"], runs["stepped"]
    stepped_run = run_of(admin, stepped)
    missing = 2**40 + 7
    body = [
        {"id": plain, "fields": {"testRunStatus": "FAILED", "actualResults": "bulk"}},
        {"id": missing, "fields": {"testRunStatus": "PASSED"}},
        {
            "id": stepped,
            "fields": {"testRunSteps": with_step_statuses(stepped_run, "BAD", "PASSED", "PASSED")},
        },
        {
            "id": stepped,
            "fields": {
                "testRunSteps": with_step_statuses(stepped_run, "PASSED", "PASSED", "PASSED")
            },
        },
    ]
    response = labs.patch("/testruns", json=body)
    assert response.status_code == 200, response.text
    results = response.json()["data"]
    assert [r["id"] for r in results] == [plain, missing, stepped, stepped]
    assert [r["status"] for r in results] == [200, 404, 400, 200]
    assert (results[0]["testRunStatus"], results[3]["testRunStatus"]) == ("FAILED", "PASSED")
    assert "BAD" in results[2]["message"]
    assert run_of(admin, plain)["fields"]["actualResults"] == "bulk"
    assert run_of(admin, stepped)["fields"]["testRunStatus"] == "PASSED"

    too_many = [{"id": plain, "fields": {}}] * 1001
    assert_error(labs.patch("/testruns", json=too_many), 400, "1000")
    assert_error(labs.patch("/testruns", json=[{"id": plain}]), 400, "element 0")
    assert_error(labs.patch("/testruns", json=[]), 400)
    assert_error(admin.patch("/testruns", json=body), 404, "under /rest/labs only")


def test_include_links_the_case_cycle_plan_and_type(
    admin: httpx.Client, project: dict[str, Any], runs: dict[str, Any]
) -> None:
    include = [
        "data.fields.testCase",
        "data.fields.testCycle",
        "data.fields.testPlan",
        "data.itemType",
    ]
    body = admin.get(f"/testruns/{runs['plain']}", params=[("include", i) for i in include]).json()
    links = body["links"]
    assert links["data.fields.testCase"]["type"] == "items"
    assert links["data.fields.testCycle"]["type"] == "testcycles"
    assert links["data.fields.testPlan"]["type"] == "testplans"
    assert links["data.fields.testPlan"]["href"].endswith("/testplans/{data.fields.testPlan}")
    linked = body["linked"]
    assert linked["items"][str(runs["cases"]["plain"])]["fields"]["name"] == "Plain"
    assert linked["testcycles"][str(runs["cycle"])]["type"] == "testcycles"
    assert linked["testplans"][str(runs["plan"])]["type"] == "testplans"
    assert linked["itemtypes"][str(project["types"]["TSTRN"]["id"])]["typeKey"] == "TSTRN"
    listed = admin.get(
        "/testruns", params=[("testCycle", runs["cycle"]), ("include", "data.fields.testPlan")]
    )
    assert set(listed.json()["linked"]["testplans"]) == {str(runs["plan"])}
    plans = admin.get(f"/testplans/{runs['plan']}", params={"include": "data.itemType"}).json()
    assert plans["linked"]["itemtypes"][str(project["types"]["TSTPL"]["id"])]["typeKey"] == "TSTPL"
    assert_error(
        admin.get(f"/testruns/{runs['plain']}", params={"include": "data..nope"}), 400, "data..nope"
    )


def test_abstract_items_find_test_records(
    admin: httpx.Client, project: dict[str, Any], runs: dict[str, Any]
) -> None:
    plan = admin.get(f"/testplans/{runs['plan']}").json()["data"]
    found = admin.get("/abstractitems", params={"documentKey": plan["documentKey"]})
    assert ids_of(found) == [runs["plan"]]
    assert total_of(found) == 1
    assert found.json()["data"][0]["type"] == "testplans"
    run = admin.get(f"/abstractitems/{runs['plain']}", params={"include": "data.fields.testCycle"})
    assert run.status_code == 200, run.text
    assert run.json()["data"]["type"] == "testruns"
    assert str(runs["cycle"]) in run.json()["linked"]["testcycles"]
    cycle = admin.get(f"/abstractitems/{runs['cycle']}").json()["data"]
    assert cycle["type"] == "testcycles"
    assert cycle["id"] == runs["cycle"]

    everything = admin.get("/abstractitems", params={"project": project["id"], "maxResults": 50})
    types = [r["type"] for r in everything.json()["data"]]
    # Tree order: the project's items, then its test records as created.
    assert types == ["items"] * 2 + ["testplans", "testcycles", "testruns", "testruns"]
    assert total_of(everything) == 6
    page = admin.get(
        "/abstractitems", params={"project": project["id"], "startAt": 1, "maxResults": 2}
    )
    assert [r["type"] for r in page.json()["data"]] == ["items", "testplans"]
    runs_only = admin.get(
        "/abstractitems",
        params={"project": project["id"], "itemType": project["types"]["TSTRN"]["id"]},
    )
    assert ids_of(runs_only) == [runs["stepped"], runs["plain"]]
    by_name = admin.get("/abstractitems", params={"project": project["id"], "sortBy": "name.asc"})
    assert by_name.status_code == 200, by_name.text
    names = [r["fields"]["name"] for r in by_name.json()["data"]]
    assert by_name.status_code == 200
    assert names == sorted(names)
    release = created_id(admin.post("/releases", json={"name": "R1", "project": project["id"]}))
    in_release = admin.get("/abstractitems", params={"project": project["id"], "release": release})
    assert ids_of(in_release) == []
    assert total_of(in_release) == 0


def test_results_by_role(team: Team, admin: httpx.Client) -> None:
    """Reading runs needs READ; recording results TEST_RUNNER; creating plans, changing
    cycles and deleting runs READ_WRITE."""
    project = team.project
    may_read, may_run, may_write = (
        team.expect("READ_ONLY"),
        team.expect("TEST_RUNNER"),
        team.expect("READ_WRITE"),
    )
    plan = new_plan(admin, project)
    case = new_test_case(admin, project, "Case")
    add_cases(admin, plan, default_group(admin, plan), case)
    for role in MATRIX_ROLES:
        client = team.clients[role]
        cycle = new_cycle(admin, plan, name=f"Cycle for {role}")
        [run] = [r["id"] for r in runs_of(admin, cycle)]
        reads = {
            "run": client.get(f"/testruns/{run}"),
            "cycle": client.get(f"/testcycles/{cycle}"),
            "cycle runs": client.get(f"/testcycles/{cycle}/testruns"),
        }
        results = {
            "put": record(client, run, testRunStatus="PASSED"),
            "patch": client.patch(
                f"/testruns/{run}",
                json=[{"op": "add", "path": "/fields/actualResults", "value": role}],
            ),
        }
        writes = {
            "plan": client.post(
                "/testplans", json={"project": project["id"], "fields": {"name": "P"}}
            ),
            "cycle": client.patch(
                f"/testcycles/{cycle}",
                json=[{"op": "replace", "path": "/fields/name", "value": "x"}],
            ),
            "delete run": client.delete(f"/testruns/{run}"),
        }
        assert_answers(reads, may_read[role], role, "no access")
        assert_answers(results, may_run[role], role)
        assert_answers(writes, may_write[role], role)
        # A search leaves out what the caller may not read (and the run writers deleted).
        found = ids_of(client.get("/testruns", params={"testCycle": cycle}))
        assert found == ([run] if may_read[role] and not may_write[role] else []), role
        if role == "READ_ONLY":
            assert_error(results["put"], 401, "READ_ONLY", "TEST_RUNNER", f"test run {run}")
        if role == "TEST_RUNNER":
            assert_error(writes["plan"], 401, "TEST_RUNNER", "READ_WRITE")


def test_concurrent_step_patches_all_land(admin: httpx.Client, project: dict[str, Any]) -> None:
    """20 PATCHes at once, each setting another step of one run: none is lost."""
    count = 20
    actions = [f"Step {n}" for n in range(count)]
    case = new_test_case(admin, project, "Many steps", steps(*actions))
    plan = new_plan(admin, project)
    add_cases(admin, plan, default_group(admin, plan), case)
    [run] = runs_of(admin, new_cycle(admin, plan))

    def set_passed(step: int) -> int:
        patch = [
            {"op": "replace", "path": f"/fields/testRunSteps/{step}/status", "value": "PASSED"}
        ]
        return admin.patch(f"/testruns/{run['id']}", json=patch).status_code

    with ThreadPoolExecutor(max_workers=count) as pool:
        answers = list(pool.map(set_passed, range(count)))
    assert answers == [200] * count
    after = run_of(admin, run["id"])["fields"]
    assert [s["status"] for s in after["testRunSteps"]] == ["PASSED"] * count
    assert after["testRunStatus"] == "PASSED"


def test_a_run_shows_its_test_cases_current_version(
    admin: httpx.Client, runs: dict[str, Any]
) -> None:
    """``testCaseCurrentVersionNumber``: the test case's version now, beside the version
    the run was made from, wherever the run is read."""
    run = run_of(admin, runs["stepped"])
    made_from = run["testCaseVersionNumber"]
    assert run["testCaseCurrentVersionNumber"] == made_from
    case = runs["cases"]["stepped"]
    for name in ("Stepped v2", "Stepped v3"):
        changed = admin.put(f"/items/{case}", json={"fields": {"name": name}})
        assert changed.status_code == 200, changed.text
    versions = made_from + 2  # one more with every change
    run = run_of(admin, runs["stepped"])
    assert run["testCaseVersionNumber"] == made_from
    assert run["testCaseCurrentVersionNumber"] == versions
    listed = {r["id"]: r for r in runs_of(admin, runs["cycle"])}
    assert listed[runs["stepped"]]["testCaseCurrentVersionNumber"] == versions
    assert (
        listed[runs["plain"]]["testCaseCurrentVersionNumber"]
        == (listed[runs["plain"]]["testCaseVersionNumber"])
    )
    found = admin.get("/testruns", params={"testCycle": runs["cycle"], "maxResults": 50})
    assert {r["id"]: r["testCaseCurrentVersionNumber"] for r in found.json()["data"]}[
        runs["stepped"]
    ] == versions
