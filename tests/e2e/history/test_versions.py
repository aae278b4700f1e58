"""The history over HTTP: versions of items (after create, PUT, PATCH, move, workflow
steps), the record at each version, relationships as they were at a time."""

from __future__ import annotations

import time
from typing import Any

import httpx

from plumbline.common.dates import format_datetime, utcnow
from tests.e2e.api import Team, assert_error, create_item, created_id, total_of, unique
from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_cycle,
    new_plan,
    new_test_case,
    record,
    runs_of,
)


def versions_of(client: httpx.Client, base: str, id: int) -> list[dict[str, Any]]:
    response = client.get(f"/{base}/{id}/versions", params={"maxResults": 50})
    assert response.status_code == 200, response.text
    return list(response.json()["data"])


def versioned(client: httpx.Client, base: str, id: int, number: int) -> dict[str, Any]:
    response = client.get(f"/{base}/{id}/versions/{number}/versioneditem")
    assert response.status_code == 200, response.text
    return dict(response.json()["data"])


def put_item(client: httpx.Client, id: int, **changes: Any) -> None:
    current = client.get(f"/items/{id}").json()["data"]
    body = {"fields": {**current["fields"], **changes}}
    body["fields"].pop("documentKey", None)
    body["fields"].pop("globalId", None)
    response = client.put(f"/items/{id}", json=body)
    assert response.status_code == 200, response.text


def test_every_change_is_a_version_read_right_after(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    me = admin.get("/users/current").json()["data"]["id"]
    item = create_item(admin, project, "First words", description="one")
    # Read-your-writes: the version is listed by the very next read.
    [first] = versions_of(admin, "items", item)
    assert first["versionNumber"] == 1
    assert first["item"] == item
    assert first["versionedItem"] == [item, 1]
    assert first["changeDetails"] == "Created"
    assert first["createdBy"] == me
    assert first["type"] == "versions"

    put_item(admin, item, name="Second words")
    response = admin.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/description", "value": "two"}]
    )
    assert response.status_code == 200, response.text
    history = versions_of(admin, "items", item)
    assert [v["versionNumber"] for v in history] == [1, 2, 3]
    assert "name" in history[1]["changeDetails"]
    assert "description" not in history[1]["changeDetails"]
    assert "description" in history[2]["changeDetails"]
    assert "name" not in history[2]["changeDetails"]

    one = admin.get(f"/items/{item}/versions/2")
    assert one.status_code == 200
    assert one.json()["data"] == history[1]

    then = versioned(admin, "items", item, 1)
    assert then["id"] == item
    assert then["type"] == "items"
    assert then["fields"]["name"] == "First words"
    assert then["fields"]["description"] == "one"
    assert then["version"] == 1
    assert then["currentVersion"] == 3
    assert then["resources"]["self"]["allowed"] == ["GET"]
    assert versioned(admin, "items", item, 3)["fields"]["description"] == "two"
    assert versioned(admin, "items", item, 2)["fields"]["name"] == "Second words"

    # The same history under /abstractitems.
    assert versions_of(admin, "abstractitems", item) == history
    assert versioned(admin, "abstractitems", item, 1)["fields"]["name"] == "First words"

    assert_error(admin.get(f"/items/{item}/versions/4"), 404, "version 4", "1 to 3")
    assert_error(admin.get(f"/items/{item}/versions/0/versioneditem"), 400, "versionNum")
    page = admin.get(f"/items/{item}/versions", params={"startAt": 1, "maxResults": 1})
    assert [v["versionNumber"] for v in page.json()["data"]] == [2]
    assert total_of(page) == 3


def test_a_move_and_a_workflow_step_are_versions(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    folder = create_item(admin, project, "Folder A")
    other = create_item(admin, project, "Folder B")
    item = create_item(admin, project, "Moving", parent=folder)
    put_item(admin, item)  # nothing changed: still a version, with nothing named
    response = admin.put(
        f"/items/{item}",
        json={
            "fields": {"name": "Moving"},
            "location": {"parent": {"item": other}},
        },
    )
    assert response.status_code == 200, response.text
    history = versions_of(admin, "items", item)
    assert len(history) == 3
    assert history[1]["changeDetails"] == "No field changed"
    assert "location" in history[2]["changeDetails"]
    assert versioned(admin, "items", item, 1)["location"]["parent"]["item"] == folder
    assert versioned(admin, "items", item, 3)["location"]["parent"]["item"] == other

    # Requirements have a workflow in the default configuration.
    [step] = admin.get(f"/items/{item}/workflowtransitionoptions").json()["data"][:1]
    response = admin.post(
        f"/items/{item}/workflowtransitions",
        json={"transitionId": step["id"], "comment": "reviewed"},
    )
    assert response.status_code in (200, 201), response.text
    latest = versions_of(admin, "items", item)[-1]
    assert latest["versionNumber"] == 4
    assert latest["comment"] == "reviewed"
    assert "status" in latest["changeDetails"]


def test_relationships_as_they_were(admin: httpx.Client, project: dict[str, Any]) -> None:
    upstream = create_item(admin, project, "Upstream")
    downstream = create_item(admin, project, "Downstream")
    moment_before = _now()
    response = admin.post("/relationships", json={"fromItem": upstream, "toItem": downstream})
    assert response.status_code == 201, response.text
    relationship = response.json()["meta"]["id"]
    put_item(admin, upstream, name="Upstream, changed")
    moment_after = _now()

    def at(item: int, moment: str) -> list[dict[str, Any]]:
        reply = admin.get(
            f"/abstractitems/{item}/versionedrelationships", params={"timestamp": moment}
        )
        assert reply.status_code == 200, reply.text
        return list(reply.json()["data"])

    assert at(upstream, moment_before) == []
    [then] = at(downstream, moment_after)
    assert then["id"] == relationship
    assert then["suspect"] is False
    assert then["fromItem"] == [upstream, 2]
    assert then["toItem"] == [downstream, 1]

    response = admin.delete(f"/relationships/{relationship}")
    assert response.status_code == 204, response.text
    assert at(upstream, _now()) == []
    assert len(at(upstream, moment_after)) == 1

    assert_error(admin.get(f"/abstractitems/{upstream}/versionedrelationships"), 400, "timestamp")
    assert_error(
        admin.get(
            f"/abstractitems/{upstream}/versionedrelationships", params={"timestamp": "yesterday"}
        ),
        400,
        "timestamp",
    )


def _now() -> str:
    """A moment strictly between what happened before and what happens after (the
    servers run on this machine's clock; dates carry milliseconds)."""
    time.sleep(0.01)
    moment = format_datetime(utcnow())
    time.sleep(0.01)
    return moment


def test_versions_follow_access(team: Team) -> None:
    admin = team.clients["ORG_ADMIN"]
    item = create_item(admin, team.project, "Guarded")
    assert len(versions_of(team.clients["READ_ONLY"], "items", item)) == 1
    assert_error(team.clients["NONE"].get(f"/items/{item}/versions"), 401)
    assert_error(team.clients["NONE"].get(f"/items/{item}/versions/1/versioneditem"), 401)
    assert_error(admin.get("/items/999999999/versions"), 404)
    response = admin.delete(f"/items/{item}")
    assert response.status_code == 204, response.text
    assert_error(admin.get(f"/items/{item}/versions"), 404)


def test_test_records_and_attachments_have_versions(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    case = new_test_case(admin, project, "Log in")
    put_item(admin, case, name="Log in, twice")  # the case is at version 2
    plan = new_plan(admin, project, "Plan A")
    add_cases(admin, plan, default_group(admin, plan), case)
    assert [v["versionNumber"] for v in versions_of(admin, "testplans", plan)] == [1]
    response = admin.put(f"/testplans/{plan}", json={"fields": {"name": "Plan B"}})
    assert response.status_code == 200, response.text
    assert [v["versionNumber"] for v in versions_of(admin, "testplans", plan)] == [1, 2]
    then = versioned(admin, "testplans", plan, 1)
    assert then["type"] == "testplans"
    assert then["fields"]["name"] == "Plan A"
    assert then["currentVersion"] == 2
    assert "archived" in then
    assert versions_of(admin, "abstractitems", plan) == versions_of(admin, "testplans", plan)

    cycle = new_cycle(admin, plan)
    assert [v["versionNumber"] for v in versions_of(admin, "testcycles", cycle)] == [1]
    assert versioned(admin, "testcycles", cycle, 1)["type"] == "testcycles"

    [run] = runs_of(admin, cycle)
    first = versioned(admin, "testruns", run["id"], 1)
    assert first["type"] == "testruns"
    assert first["fields"]["testRunStatus"] == "NOT_RUN"
    # A generated run's testCaseVersionNumber is the case's version.
    assert (
        first["testCaseVersionNumber"]
        == 2
        == versions_of(admin, "items", case)[-1]["versionNumber"]
    )
    assert record(admin, run["id"], testRunStatus="BLOCKED").status_code == 200
    runs = versions_of(admin, "testruns", run["id"])
    assert [v["versionNumber"] for v in runs] == [1, 2]
    assert "testRunStatus" in runs[1]["changeDetails"]
    assert versioned(admin, "testruns", run["id"], 2)["fields"]["testRunStatus"] == "BLOCKED"

    attachment = created_id(
        admin.post(f"/projects/{project['id']}/attachments", json={"fields": {"name": "Evidence"}})
    )
    upload = admin.put(
        f"/attachments/{attachment}/file", files={"file": ("log.txt", b"all good", "text/plain")}
    )
    assert upload.status_code == 200, upload.text
    history = versions_of(admin, "attachments", attachment)
    assert [v["versionNumber"] for v in history] == [1, 2]
    assert "fileName" in history[1]["changeDetails"]
    assert versioned(admin, "attachments", attachment, 1)["fileName"] == ""
    later = versioned(admin, "attachments", attachment, 2)
    assert (later["type"], later["fileName"], later["fileSize"]) == ("attachments", "log.txt", 8)
    assert versioned(admin, "abstractitems", attachment, 2)["fileName"] == "log.txt"


def test_a_record_as_it_was(admin: httpx.Client, project: dict[str, Any]) -> None:
    before = _now()
    item = create_item(admin, project, "Then")
    created = _now()
    put_item(admin, item, name="Now")
    then = admin.get(f"/items/{item}", params={"asOf": created})
    assert then.status_code == 200, then.text
    data = then.json()["data"]
    assert data["fields"]["name"] == "Then"
    assert data["version"] == 1
    assert data["currentVersion"] == 2
    now = admin.get(f"/abstractitems/{item}", params={"asOf": _now()}).json()["data"]
    assert now["fields"]["name"] == "Now"
    assert now["version"] == 2
    # Without asOf, the record as it is (no version members).
    assert "version" not in admin.get(f"/items/{item}").json()["data"]
    assert_error(admin.get(f"/items/{item}", params={"asOf": before}), 404, "did not exist")
    assert_error(admin.get(f"/items/{item}", params={"asOf": "last week"}), 400, "asOf")


def test_categories_at_each_version(admin: httpx.Client, project: dict[str, Any]) -> None:
    labs = str(admin.base_url).rstrip("/").replace("/rest/v1", "/rest/labs")
    category = created_id(admin.post(f"{labs}/categories", json={"name": unique("Safety")}))
    item = create_item(admin, project, "Categorised")
    response = admin.post(f"{labs}/items/{item}/categories", json={"add": [category]})
    assert response.status_code == 201, response.text
    history = versions_of(admin, "items", item)
    assert [v["versionNumber"] for v in history] == [1, 2]

    def at(number: int | None) -> list[int]:
        params = {} if number is None else {"versionNumber": number}
        reply = admin.get(f"/items/{item}/versioncategories", params=params)
        assert reply.status_code == 200, reply.text
        return [c["id"] for c in reply.json()["data"]]

    assert at(1) == []
    assert at(2) == [category]
    assert at(None) == [category]
    assert_error(admin.get(f"/items/{item}/versioncategories", params={"versionNumber": 3}), 404)
    assert_error(
        admin.get(f"/items/{item}/versioncategories", params={"versionNumber": "x"}),
        400,
        "versionNumber",
    )

    # A later change of the item keeps its categories at its new version (the write
    # returns them), two of them in order.
    second = created_id(admin.post(f"{labs}/categories", json={"name": unique("Security")}))
    response = admin.post(f"{labs}/items/{item}/categories", json={"add": [second]})
    assert response.status_code == 201, response.text
    put_item(admin, item, name="Categorised, renamed")
    assert [v["versionNumber"] for v in versions_of(admin, "items", item)] == [1, 2, 3, 4]
    assert at(4) == sorted([category, second])
    assert at(2) == [category]
    put_item(admin, item, name="Categorised, renamed again")
    assert at(5) == sorted([category, second])
