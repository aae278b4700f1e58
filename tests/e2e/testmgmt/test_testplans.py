"""Test plans, their test groups and the test cases in them, over HTTP; who may do what."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import (
    MATRIX_ROLES,
    Team,
    assert_answers,
    assert_error,
    create_item,
    created_id,
    ids_of,
    new_project,
    total_of,
    unique,
)
from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_group,
    new_plan,
    new_test_case,
    patch_fields_at_once,
)


def test_plan_lifecycle(admin: httpx.Client, project: dict[str, Any]) -> None:
    name = unique("Plan ")
    response = admin.post(
        "/testplans",
        json={"project": project["id"], "fields": {"name": name, "description": "<p>d</p>"}},
    )
    plan = created_id(response)
    assert response.json()["meta"]["location"].endswith(f"/rest/v1/testplans/{plan}")
    body = admin.get(f"/testplans/{plan}").json()
    data = body["data"]
    assert data["type"] == "testplans"
    assert data["id"] == plan
    assert data["documentKey"].startswith(f"{project['key']}-TSTPL-")
    assert data["fields"]["documentKey"] == data["documentKey"]
    assert data["fields"]["globalId"] == data["globalId"]
    assert data["globalId"]
    assert (data["fields"]["name"], data["fields"]["description"]) == (name, "<p>d</p>")
    assert (data["project"], data["itemType"]) == (project["id"], project["types"]["TSTPL"]["id"])
    assert data["archived"] is False
    assert data["lock"]["locked"] is False
    assert "GET" in data["resources"]["self"]["allowed"]
    for member in ("createdDate", "modifiedDate", "lastActivityDate"):
        assert data[member].endswith("+0000"), member
    assert isinstance(data["createdBy"], int)
    assert isinstance(data["modifiedBy"], int)
    assert body["links"]["data.project"]["type"] == "projects"

    assert (
        admin.put(f"/testplans/{plan}", json={"fields": {"name": "Renamed"}}).json()["meta"][
            "status"
        ]
        == "OK"
    )
    again = admin.get(f"/testplans/{plan}").json()["data"]
    assert again["fields"]["name"] == "Renamed"
    assert again["documentKey"] == data["documentKey"]

    # A whole GET data object back: the read-only members are ignored.
    again["fields"]["name"] = "Put back"
    again["documentKey"] = "HACKED-1"
    again["archived"] = True
    assert admin.put(f"/testplans/{plan}", json=again).status_code == 200
    put_back = admin.get(f"/testplans/{plan}").json()["data"]
    assert put_back["fields"]["name"] == "Put back"
    assert put_back["documentKey"] == data["documentKey"]
    assert put_back["archived"] is False

    patch = [{"op": "replace", "path": "/fields/name", "value": "Patched"}]
    patched = admin.patch(f"/testplans/{plan}", json=patch)
    assert patched.status_code == 200
    assert patched.json()["meta"]["status"] == "OK"
    assert admin.get(f"/testplans/{plan}").json()["data"]["fields"]["name"] == "Patched"
    nowhere = [{"op": "replace", "path": "/fields/nope", "value": 1}]
    assert_error(admin.patch(f"/testplans/{plan}", json=nowhere), 400)

    assert admin.put(f"/testplans/{plan}/archived", json={"archived": True}).status_code == 200
    assert admin.get(f"/testplans/{plan}").json()["data"]["archived"] is True
    assert admin.put(f"/testplans/{plan}/archived", json={"archived": False}).status_code == 200
    assert admin.get(f"/testplans/{plan}").json()["data"]["archived"] is False
    assert_error(admin.put(f"/testplans/{plan}/archived", json={}), 400, "archived")

    deleted = admin.delete(f"/testplans/{plan}")
    assert deleted.status_code == 204
    assert not deleted.content
    assert_error(admin.get(f"/testplans/{plan}"), 404, str(plan))
    assert_error(admin.delete(f"/testplans/{plan}"), 404)


def test_a_plan_needs_a_project_and_a_name(admin: httpx.Client, project: dict[str, Any]) -> None:
    assert_error(admin.post("/testplans", json={"fields": {"name": "No project"}}), 400, "project")
    assert_error(admin.get("/testplans"), 400, "project")
    no_name = admin.post("/testplans", json={"project": project["id"], "fields": {}})
    assert_error(no_name, 400, "name")
    unknown = admin.post("/testplans", json={"project": project["id"], "fields": {"nope": 1}})
    assert_error(unknown, 400, "nope")


def test_plans_of_a_project_are_listed(admin: httpx.Client, project: dict[str, Any]) -> None:
    plans = [new_plan(admin, project, f"Plan {n}") for n in range(3)]
    listed = admin.get("/testplans", params={"project": project["id"]})
    assert ids_of(listed) == plans
    assert total_of(listed) == 3
    assert all(p["type"] == "testplans" for p in listed.json()["data"])
    page = admin.get("/testplans", params={"project": project["id"], "startAt": 1, "maxResults": 1})
    assert ids_of(page) == plans[1:2]
    assert total_of(page) == 3
    assert page.json()["meta"]["pageInfo"]["startIndex"] == 1


def test_an_item_is_not_a_plan(admin: httpx.Client, project: dict[str, Any]) -> None:
    item = create_item(admin, project, "Just a requirement")
    assert_error(admin.get(f"/testplans/{item}"), 404)


def test_dates_with_time(admin: httpx.Client, project: dict[str, Any]) -> None:
    plan = new_plan(admin, project, startDate="2024-03-01")
    plain = admin.get(f"/testplans/{plan}").json()["data"]["fields"]["startDate"]
    assert plain == "2024-03-01"
    for header in ("x-service-date-fields-with-time", "x-jama-date-fields-with-time"):
        timed = admin.get(f"/testplans/{plan}", headers={header: "true"})
        assert timed.json()["data"]["fields"]["startDate"].startswith("2024-03-01T"), header


def test_a_new_plan_has_one_test_group_and_groups_change(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    plan = new_plan(admin, project)
    listed = admin.get(f"/testplans/{plan}/testgroups")
    assert total_of(listed) == 1
    [first] = listed.json()["data"]
    assert first["type"] == "testgroups"
    assert first["name"]

    me = admin.get("/users/current").json()["data"]["id"]
    response = admin.post(f"/testplans/{plan}/testgroups", json={"name": "Smoke", "assignedTo": me})
    group = created_id(response)
    assert response.json()["meta"]["location"].endswith(f"/testplans/{plan}/testgroups/{group}")
    got = admin.get(f"/testplans/{plan}/testgroups/{group}", params={"include": "data.assignedTo"})
    assert got.json()["data"] == {
        "id": group,
        "name": "Smoke",
        "assignedTo": me,
        "type": "testgroups",
    }
    assert got.json()["linked"]["users"][str(me)]["username"] == "admin"
    assert ids_of(admin.get(f"/testplans/{plan}/testgroups")) == [first["id"], group]

    renamed = admin.put(f"/testplans/{plan}/testgroups/{group}", json={"name": "Regression"})
    assert renamed.status_code == 200
    data = admin.get(f"/testplans/{plan}/testgroups/{group}").json()["data"]
    assert data["name"] == "Regression"
    assert "assignedTo" not in data
    assert_error(admin.post(f"/testplans/{plan}/testgroups", json={}), 400, "name")

    other = new_plan(admin, project, "Other")
    assert_error(admin.get(f"/testplans/{other}/testgroups/{group}"), 404)
    assert admin.delete(f"/testplans/{plan}/testgroups/{group}").status_code == 204
    assert_error(admin.get(f"/testplans/{plan}/testgroups/{group}"), 404)
    assert ids_of(admin.get(f"/testplans/{plan}/testgroups")) == [first["id"]]


def test_test_cases_of_a_group_in_order(admin: httpx.Client, project: dict[str, Any]) -> None:
    plan = new_plan(admin, project)
    group = default_group(admin, plan)
    one, two, three = (new_test_case(admin, project, f"Case {n}") for n in (1, 2, 3))
    add_cases(admin, plan, group, two, one, three)
    cases = f"/testplans/{plan}/testgroups/{group}/testcases"
    listed = admin.get(cases, params={"include": "data.itemType"})
    assert ids_of(listed) == [two, one, three]
    assert total_of(listed) == 3
    body = listed.json()
    assert all(c["type"] == "items" for c in body["data"])
    assert body["data"][1]["fields"]["name"] == "Case 1"
    tc = str(project["types"]["TC"]["id"])
    assert body["linked"]["itemtypes"][tc]["typeKey"] == "TC"
    page = admin.get(cases, params={"startAt": 1, "maxResults": 1})
    assert ids_of(page) == [one]
    assert total_of(page) == 3

    assert admin.get(f"{cases}/{one}").json()["data"]["id"] == one
    requirement = create_item(admin, project, "Not a test case")
    refused = admin.post(cases, json={"testCase": requirement})
    assert_error(refused, 400, str(requirement))
    assert "test case" in refused.json()["meta"]["message"].lower()
    assert_error(admin.get(f"{cases}/{requirement}"), 404)
    # A test case of another project is refused: the plan's runs would copy it into this
    # project, where its readers may not see it.
    elsewhere = new_test_case(admin, {**project, "id": new_project(admin)}, "Elsewhere")
    foreign = admin.post(cases, json={"testCase": elsewhere})
    assert_error(foreign, 400, str(elsewhere), "own project")
    assert ids_of(admin.get(cases)) == [two, one, three]

    assert admin.delete(f"{cases}/{one}").status_code == 204
    assert ids_of(admin.get(cases)) == [two, three]
    assert_error(admin.get(f"{cases}/{one}"), 404)
    assert_error(admin.delete(f"{cases}/{one}"), 404)
    # Another group of the plan keeps its own list.
    other = new_group(admin, plan, "Other", one)
    assert ids_of(admin.get(f"/testplans/{plan}/testgroups/{other}/testcases")) == [one]


def _at_labs(client: httpx.Client) -> httpx.Client:
    """A client as ``client`` (its credentials) at ``/rest/labs``."""
    base = str(client.base_url).rstrip("/").rsplit("/", 1)[0]
    return httpx.Client(base_url=f"{base}/labs", auth=client.auth, timeout=client.timeout)


def test_many_test_cases_added_at_once(admin: httpx.Client, labs: httpx.Client, team: Team) -> None:
    """``POST /rest/labs/…/testcases/batch``: in the order given, after the cases there,
    each in the plan's feed as a single add; a bad one anywhere adds none."""
    project = team.project
    plan = new_plan(admin, project)
    group = default_group(admin, plan)
    cases = [new_test_case(admin, project, f"Case {n}") for n in range(4)]
    add_cases(admin, plan, group, cases[0])
    path = f"/testplans/{plan}/testgroups/{group}/testcases"
    batch = f"{path}/batch"
    feed = f"/testplans/{plan}/activities"
    before = total_of(admin.get(feed))
    answer = labs.post(batch, json={"testCases": [cases[3], cases[1], cases[2]]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == {"added": 3}
    assert ids_of(admin.get(path)) == [cases[0], cases[3], cases[1], cases[2]]
    assert total_of(admin.get(feed)) == before + 3

    requirement = create_item(admin, project, "Not a test case")
    fresh = [new_test_case(admin, project, f"Fresh {n}") for n in range(2)]
    for body, status, named in (
        ({"testCases": [fresh[0], requirement]}, 400, str(requirement)),
        ({"testCases": [fresh[0], cases[1]]}, 400, f"{cases[1]} already exists"),
        ({"testCases": [fresh[0], fresh[1], fresh[0]]}, 400, "more than once"),
        ({"testCases": []}, 400, "testCases"),
        ({"testCases": [fresh[0]] * 1001}, 400, "testCases"),
        ({"testCase": fresh[0]}, 400, "testCases"),
    ):
        assert_error(labs.post(batch, json=body), status, named)
    assert ids_of(admin.get(path)) == [cases[0], cases[3], cases[1], cases[2]]
    # Offered under /rest/labs only.
    assert_error(admin.post(batch, json={"testCases": [fresh[0]]}), 404, "/rest/labs")
    # Who may add one may add many; a reader may not.
    reader, writer = (_at_labs(team.clients[role]) for role in ("READ_ONLY", "READ_WRITE"))
    with reader, writer:
        assert_error(reader.post(batch, json={"testCases": [fresh[0]]}), 401, "READ_ONLY")
        added = writer.post(batch, json={"testCases": fresh})
        assert added.status_code == 200, added.text
    assert ids_of(admin.get(path, params={"startAt": 4})) == fresh


def test_plans_by_role(team: Team, admin: httpx.Client) -> None:
    """Reading a plan needs READ on its project; creating or changing one, WRITE."""
    project = team.project
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    case = new_test_case(admin, project, "Case")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        plan = new_plan(admin, project, f"Plan for {role}")
        group = default_group(admin, plan)
        add_cases(admin, plan, group, case)
        reads = {
            "plan": client.get(f"/testplans/{plan}"),
            "list": client.get("/testplans", params={"project": project["id"]}),
            "groups": client.get(f"/testplans/{plan}/testgroups"),
            "group": client.get(f"/testplans/{plan}/testgroups/{group}"),
            "cases": client.get(f"/testplans/{plan}/testgroups/{group}/testcases"),
        }
        writes = {
            "create": client.post(
                "/testplans", json={"project": project["id"], "fields": {"name": "Mine"}}
            ),
            "update": client.put(f"/testplans/{plan}", json={"fields": {"name": "Changed"}}),
            "archive": client.put(f"/testplans/{plan}/archived", json={"archived": True}),
            "group": client.post(f"/testplans/{plan}/testgroups", json={"name": "New"}),
            "remove case": client.delete(f"/testplans/{plan}/testgroups/{group}/testcases/{case}"),
            "delete": client.delete(f"/testplans/{plan}"),
        }
        assert_answers(reads, may_read[role], role, "no access")
        if may_read[role]:
            assert plan in ids_of(reads["list"]), role
        assert_answers(writes, may_write[role], role)
        if role == "READ_ONLY":
            assert_error(writes["update"], 401, "READ_ONLY", "READ_WRITE", f"test plan {plan}")
        if role == "TEST_RUNNER":
            assert_error(writes["create"], 401, "TEST_RUNNER")


def test_concurrent_patches_of_one_plan_all_land(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    """Rounds of two PATCHes at once, one the name and one the description of one plan:
    neither is lost to the other's write (each reads, patches and writes the row locked)."""
    plan = new_plan(admin, project)
    for n in range(10):
        wanted = {"name": f"Name {n}", "description": f"Description {n}"}
        assert patch_fields_at_once(admin, f"/testplans/{plan}", wanted) == [200, 200]
        fields = admin.get(f"/testplans/{plan}").json()["data"]["fields"]
        assert {k: fields[k] for k in wanted} == wanted
