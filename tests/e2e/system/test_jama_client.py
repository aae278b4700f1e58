"""The real public client, unmodified, in Basic and in OAuth mode: users, projects, items,
test management."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from py_jama_rest_client.client import JamaClient

from tests.e2e.api import api_credentials, item_types, new_project, project_key, unique
from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_group,
    new_plan,
    new_test_case,
    steps,
)
from tests.e2e.topology import System


@pytest.fixture(params=["basic", "oauth"])
def jama(request: pytest.FixtureRequest, system: System) -> JamaClient:
    logging.getLogger("py_jama_rest_client").setLevel(logging.CRITICAL)
    if request.param == "basic":
        return JamaClient(system.url, credentials=("admin", system.admin_password))
    return JamaClient(system.url, credentials=api_credentials(system), oauth=True)


def test_get_current_user(jama: JamaClient) -> None:
    user = jama.get_current_user()
    assert user["username"] == "admin"
    assert isinstance(user["id"], int)


def test_post_user_returns_the_id_and_get_users_pages_through_all(jama: JamaClient) -> None:
    created = []
    for _ in range(3):
        username = unique("jama")
        new_id = jama.post_user(
            username, "secret-pw", "Jama", "Client", f"{username}@example.com", "NAMED"
        )
        assert isinstance(new_id, int)
        created.append((new_id, username))
    users = jama.get_users()
    by_id = {u["id"]: u["username"] for u in users}
    for new_id, username in created:
        assert by_id[new_id] == username
    assert len(by_id) == len(users), "a page was returned twice"


def test_post_user_twice_is_already_exists(jama: JamaClient) -> None:
    from py_jama_rest_client.client import AlreadyExistsException

    username = unique("dup")
    jama.post_user(username, "pw", "A", "B", f"{username}@example.com", "NAMED")
    with pytest.raises(AlreadyExistsException):
        jama.post_user(username, "pw", "A", "B", f"{username}@example.com", "NAMED")


def test_get_projects(jama: JamaClient, admin: httpx.Client) -> None:
    key = project_key("JC")
    response = admin.post("/projects", json={"projectKey": key, "fields": {"name": key}})
    assert response.status_code == 201, response.text
    projects = jama.get_projects()
    assert key in {p.get("projectKey") for p in projects}


def test_get_available_endpoints(jama: JamaClient) -> None:
    names = {e["name"] for e in jama.get_available_endpoints()}
    assert {"users", "projects"} <= names


def _requirement_type(jama: JamaClient) -> dict[str, Any]:
    """The REQ item type, found with its status field's pick list and options."""
    types = {t["typeKey"]: t for t in jama.get_item_types()}
    req = types["REQ"]
    assert jama.get_item_type(req["id"])["typeKey"] == "REQ"
    status = next(f for f in req["fields"] if f["name"] == "status")
    pick_lists = {p["id"] for p in jama.get_pick_lists()}
    assert status["pickList"] in pick_lists
    assert jama.get_pick_list(status["pickList"])["name"] == "Status"
    options = jama.get_pick_list_options(status["pickList"])
    assert jama.get_pick_list_option(options[0]["id"])["name"] == options[0]["name"]
    return dict(req)


def _tag(jama: JamaClient, project: int, child: int) -> None:
    """A new tag on ``child``, found from both sides."""
    tag = jama.post_tag(unique("tag"), project)
    assert isinstance(tag, int)
    jama.post_item_tag(child, tag)
    assert [t["id"] for t in jama.get_item_tags(child)] == [tag]
    assert tag in {t["id"] for t in jama.get_tags(project)}
    assert [i["id"] for i in jama.get_tagged_items(tag)] == [child]


def _relate(jama: JamaClient, project: int, parent: int, child: int, other: int) -> None:
    """A relationship made, moved to ``other``, found up- and downstream, deleted."""
    rel_types = jama.get_relationship_types()
    assert jama.get_relationship_type(rel_types[0]["id"])["name"] == rel_types[0]["name"]
    rel = jama.post_relationship(parent, child)
    jama.put_relationship(rel, parent, other)
    assert jama.get_relationship(rel)["toItem"] == other
    assert [r["id"] for r in jama.get_relationships(project)] == [rel]
    assert [i["id"] for i in jama.get_items_downstream_related(parent)] == [other]
    assert [r["id"] for r in jama.get_items_downstream_relationships(parent)] == [rel]
    assert [i["id"] for i in jama.get_items_upstream_related(other)] == [parent]
    assert [r["id"] for r in jama.get_items_upstream_relationships(other)] == [rel]
    jama.delete_relationships(rel)
    assert jama.get_relationships(project) == []


def test_items_families(jama: JamaClient, admin: httpx.Client) -> None:
    key = project_key("JI")
    project = new_project(admin, key)
    assert key in {p.get("projectKey") for p in jama.get_projects()}

    req = _requirement_type(jama)

    parent = jama.post_item(project, req["id"], req["id"], {"project": project}, {"name": "Parent"})
    child = jama.post_item(project, req["id"], req["id"], {"item": parent}, {"name": "Child"})
    other = jama.post_item(
        project,
        req["id"],
        req["id"],
        {"project": project},
        {"name": "Other"},
        global_id=unique("GID-C-"),
    )
    assert {i["id"] for i in jama.get_items(project)} == {parent, child, other}
    assert [i["id"] for i in jama.get_item_children(parent)] == [child]
    item = jama.get_item(child)
    assert item["fields"]["name"] == "Child"

    assert (
        jama.put_item(project, child, req["id"], req["id"], {"item": parent}, {"name": "Child 2"})
        == 200
    )
    assert (
        jama.patch_item(child, [{"op": "replace", "path": "/fields/name", "value": "Child 3"}])
        == "OK"
    )
    assert jama.get_item(child)["fields"]["name"] == "Child 3"

    assert jama.put_item_lock(child, True) == 200
    assert jama.get_item_lock(child)["locked"] is True
    jama.put_item_lock(child, False)

    _tag(jama, project, child)
    _relate(jama, project, parent, child, other)

    synced = jama.post_item_sync(child, other)
    assert synced == child
    assert [i["id"] for i in jama.get_items_synceditems(other)] == [child]
    assert "inSync" in jama.get_items_synceditems_status(other, child)

    transitions = jama.get_item_workflow_transitions(parent)
    assert [t["action"] for t in transitions] == ["Submit for review"]

    by_key = jama.get_abstract_items_from_doc_key([item["documentKey"]])
    assert [i["id"] for i in by_key] == [child]
    found = jama.get_abstract_items(project=[project], contains=["Parent"])
    assert [i["id"] for i in found] == [parent]
    assert jama.get_abstract_item(parent)["id"] == parent

    rule_sets = jama.get_relationship_rule_sets()
    assert jama.get_relationship_rule_set(rule_sets[0]["id"])["name"] == rule_sets[0]["name"]
    assert isinstance(jama.get_relationship_rule_set_projects(rule_sets[0]["id"]), list)

    query = {"rule": {"field": {"name": "name"}, "operator": "CONTAINS", "values": ["Parent"]}}
    created = admin.post(
        "/../labs/filters",
        json={
            "name": unique("jf"),
            "filterQuery": query,
            "projectScope": "SPECIFIED",
            "specifiedProject": project,
        },
    )
    assert created.status_code == 201, created.text
    found = jama.get_filter_results(created.json()["meta"]["id"])
    assert [i["id"] for i in found] == [parent]

    assert jama.delete_item(other) == 204
    assert {i["id"] for i in jama.get_items(project)} == {parent, child}
    assert jama.get_current_user()["username"] == "admin"


def test_oauth_with_wrong_secret_is_refused(system: System) -> None:
    from py_jama_rest_client.client import APIException

    client_id, _secret = api_credentials(system)
    with pytest.raises(APIException):
        JamaClient(system.url, credentials=(client_id, "not-the-secret"), oauth=True)


def test_test_management(jama: JamaClient, admin: httpx.Client) -> None:
    """The client's test-management calls: cycles made from a plan, their runs paged
    through, results PUT as a JSON string, and the runs found among abstract items."""
    from py_jama_rest_client.client import APIException

    key = project_key("JT")
    project: dict[str, Any] = {"id": new_project(admin, key), "types": item_types(admin)}
    cases = [new_test_case(admin, project, f"Case {n}", steps("open")) for n in range(23)]
    plan = new_plan(admin, project, "Release plan")
    group = default_group(admin, plan)
    add_cases(admin, plan, group, *cases[:21])
    other = new_group(admin, plan, "Smoke", *cases[21:])

    cycle = jama.post_testplans_testcycles(plan, "Sprint 1", "2026-01-05", "2026-01-16")
    assert isinstance(cycle, int)
    assert jama.get_test_cycle(cycle)["fields"]["name"] == "Sprint 1"
    runs = jama.get_testruns(cycle)
    assert len(runs) == 23, "a page was returned twice"
    assert len({r["id"] for r in runs}) == 23, "a page was returned twice"
    assert [r["fields"]["testCase"] for r in runs] == cases

    failed, passed = runs[0], runs[1]
    body = {"fields": {"testRunSteps": [{"status": "FAILED", "result": "crashed"}]}}
    jama.put_test_run(failed["id"], data=json.dumps(body))
    # An older script PUTs the whole GET data back with a step's status changed.
    whole: dict[str, Any] = json.loads(json.dumps(passed))
    whole["fields"]["testRunSteps"][0]["status"] = "PASSED"
    jama.put_test_run(passed["id"], data=json.dumps(whole))
    statuses = {r["id"]: r["fields"]["testRunStatus"] for r in jama.get_testruns(cycle)}
    assert statuses[failed["id"]] == "FAILED"
    assert statuses[passed["id"]] == "PASSED"

    only_smoke = jama.post_testplans_testcycles(
        plan, "Smoke only", "2026-01-19", "2026-01-20", testgroups_to_include=[other]
    )
    assert [r["fields"]["testCase"] for r in jama.get_testruns(only_smoke)] == cases[21:]
    reruns = jama.post_testplans_testcycles(
        plan, "Failures again", "2026-01-21", "2026-01-22", testrun_status_to_include=["FAILED"]
    )
    # The previous cycle is "Smoke only", whose runs were not run.
    assert jama.get_testruns(reruns) == []

    found = jama.get_abstract_items(
        project=[project["id"]], item_type=[project["types"]["TSTRN"]["id"]]
    )
    assert len(found) == 23 + 2
    assert all(r["type"] == "testruns" for r in found)

    with pytest.raises(APIException):
        jama.post_testplans_testcycles(plan, "Backwards", "2026-02-10", "2026-02-01")


def test_attachments(jama: JamaClient, admin: httpx.Client, system: System, tmp_path: Path) -> None:
    project_id = new_project(admin, project_key("JA"))
    attachment = jama.post_project_attachment(project_id, "Evidence", "the run's log")
    assert isinstance(attachment, int)
    content = os.urandom(1_500_000) + "ünïcode tail".encode()
    path = tmp_path / "run log (1).txt"
    path.write_bytes(content)
    assert jama.put_attachments_file(attachment, str(path)) == 200
    record = jama.get_attachment(attachment)
    assert record["fileName"] == "run log (1).txt"
    assert record["fileSize"] == len(content)
    assert record["fields"]["name"] == "Evidence"

    item = admin.post(
        "/items",
        json={
            "project": project_id,
            "itemType": item_types(admin)["REQ"]["id"],
            "location": {"parent": {"project": project_id}},
            "fields": {"name": "With evidence"},
        },
    ).json()["meta"]["id"]
    assert jama.post_item_attachment(item, attachment) == 201
    [attached] = admin.get(f"/items/{item}/attachments").json()["data"]
    assert attached["id"] == attachment

    # The download, through the client's own session and credentials.
    core = jama._JamaClient__core
    direct = core.get(f"attachments/{attachment}/file")
    assert direct.status_code == 200
    assert direct.content == content
    url = f"{system.url}/rest/v1/attachments/{attachment}/file"
    by_url = core.get("files", params={"url": url})
    assert by_url.status_code == 200
    assert by_url.content == content
    found = jama.get_abstract_items(project=[project_id], contains=["Evidence"])
    assert [r["id"] for r in found if r["type"] == "attachments"] == [attachment]


def test_history(jama: JamaClient, admin: httpx.Client) -> None:
    """The client's version and baseline methods, unmodified."""
    project_id = new_project(admin, project_key("JH"))
    item = admin.post(
        "/items",
        json={
            "project": project_id,
            "itemType": item_types(admin)["REQ"]["id"],
            "location": {"parent": {"project": project_id}},
            "fields": {"name": "Kept"},
        },
    ).json()["meta"]["id"]
    changed = admin.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "Kept, v2"}]
    )
    assert changed.status_code == 200, changed.text

    versions = jama.get_item_versions(item)
    assert [v["versionNumber"] for v in versions] == [1, 2]
    assert jama.get_item_version(item, 2)["versionNumber"] == 2
    assert jama.get_versioned_item(item, 1)["fields"]["name"] == "Kept"
    assert jama.get_versioned_item(item, 2)["currentVersion"] == 2
    assert [v["versionNumber"] for v in jama.get_abstract_item_versions(item)] == [1, 2]
    assert jama.get_abtract_item_version(item, 1)["item"] == item
    assert jama.get_abstract_versioned_item(item, 1)["fields"]["name"] == "Kept"

    # Baselines are taken under /rest/labs (the client only reads them).
    labs = str(admin.base_url).rstrip("/").replace("/rest/v1", "/rest/labs")
    taken = admin.post(f"{labs}/baselines", json={"name": "R1", "project": project_id})
    assert taken.status_code == 201, taken.text
    baseline = taken.json()["meta"]["id"]
    assert [b["id"] for b in jama.get_baselines(project_id)] == [baseline]
    assert jama.get_baseline(baseline)["name"] == "R1"
    [held] = jama.get_baselines_versioneditems(baseline)
    assert (held["id"], held["version"], held["fields"]["name"]) == (item, 2, "Kept, v2")
