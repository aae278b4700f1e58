"""Projects, folders and the activity feed over HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from tests.e2e.harness import MakeUser, new_project, project_key, unique


def test_create_read_update_a_project(admin: httpx.Client) -> None:
    key = project_key("PRJ")
    pid = new_project(admin, projectKey=key, fields={"name": "First", "description": "d"})
    body = admin.get(f"/projects/{pid}", params={"include": "data.createdBy"}).json()
    data = body["data"]
    assert (data["projectKey"], data["isFolder"], data["fields"]["name"]) == (key, False, "First")
    assert data["fields"]["projectKey"] == key
    assert body["links"]["data.createdBy"]["href"].endswith("/rest/v1/users/{data.createdBy}")
    assert body["linked"]["users"][str(data["createdBy"])]["username"] == "admin"
    updated = admin.put(
        f"/projects/{pid}", json={"fields": {"name": "Renamed", "description": "e"}}
    )
    assert updated.status_code == 200 and updated.json()["meta"]["status"] == "OK"
    after = admin.get(f"/projects/{pid}").json()["data"]
    assert after["fields"]["name"] == "Renamed" and after["modifiedDate"] >= data["modifiedDate"]


def test_folders(admin: httpx.Client) -> None:
    folder = new_project(admin, isFolder=True, fields={"name": unique("Folder")})
    child = new_project(admin, projectKey=project_key("CH"), parent=folder, fields={"name": "c"})
    assert admin.get(f"/projects/{child}").json()["data"]["parent"] == folder
    assert "projectKey" not in admin.get(f"/projects/{folder}").json()["data"]
    not_folder = admin.post(
        "/projects",
        json={"projectKey": project_key("X"), "parent": child, "fields": {"name": "x"}},
    )
    assert not_folder.status_code == 400 and "not a folder" in not_folder.json()["meta"]["message"]
    assert admin.put(f"/projects/{child}", json={"parent": None}).status_code == 200
    assert "parent" not in admin.get(f"/projects/{child}").json()["data"]


def test_project_key_rules(admin: httpx.Client, make_user: MakeUser) -> None:
    key = project_key("DUP")
    new_project(admin, projectKey=key, fields={"name": "a"})
    duplicate = admin.post("/projects", json={"projectKey": key, "fields": {"name": "b"}})
    assert duplicate.status_code == 400 and "already exists" in duplicate.json()["meta"]["message"]
    missing = admin.post("/projects", json={"fields": {"name": "no key"}})
    assert missing.status_code == 400 and "projectKey" in missing.json()["meta"]["message"]
    bad = admin.post("/projects", json={"projectKey": "9 lives", "fields": {"name": "x"}})
    assert bad.status_code == 400 and "projectKey" in bad.json()["meta"]["message"]
    _id, _n, _p, client = make_user()
    refused = client.post(
        "/projects", json={"projectKey": project_key("U"), "fields": {"name": "x"}}
    )
    assert refused.status_code == 401
    assert client.get("/projects").status_code == 200


def test_project_pages_reach_the_total(admin: httpx.Client) -> None:
    for _ in range(3):
        new_project(admin, projectKey=project_key("PG"), fields={"name": "p"})
    total = admin.get("/projects").json()["meta"]["pageInfo"]["totalResults"]
    seen: list[int] = []
    start = 0
    while start < total:
        page = admin.get("/projects", params={"startAt": start, "maxResults": 2}).json()
        assert page["meta"]["pageInfo"]["startIndex"] == start
        seen += [p["id"] for p in page["data"]]
        start += 2
    assert len(seen) == len(set(seen)) == total


def test_changes_show_in_the_feed_at_once(admin: httpx.Client, make_user: MakeUser) -> None:
    before = (datetime.now(UTC) - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S.000+0000")
    pid = new_project(admin, projectKey=project_key("ACT"), fields={"name": "Feed"})
    # No polling: the gateway waits for the feed to catch up with the write.
    feed = admin.get("/activities", params={"project": pid, "objectType": "PROJECT"}).json()
    assert [(a["eventType"], a["action"]) for a in feed["data"]] == [("CREATE", "Created")]
    activity = feed["data"][0]
    assert activity["user"] == admin.get("/users/current").json()["data"]["id"]

    admin.put(f"/projects/{pid}", json={"fields": {"name": "Feed 2"}})
    group = admin.post("/usergroups", json={"name": unique("fg")}).json()["meta"]["id"]
    admin.delete(f"/usergroups/{group}")
    updates = admin.get(
        "/activities", params={"project": pid, "eventType": "UPDATE", "objectType": "PROJECT"}
    ).json()
    assert len(updates["data"]) == 1
    deletes = admin.get("/activities", params={"project": pid, "deleteEvents": "true"}).json()
    assert deletes["data"] and all(a["eventType"] == "DELETE" for a in deletes["data"])
    both = admin.get(
        "/activities",
        params=[
            ("project", pid),
            ("eventType", "CREATE"),
            ("eventType", "UPDATE"),
            ("objectType", "PROJECT"),
        ],
    )
    assert len(both.json()["data"]) == 2

    since = admin.get(
        "/activities", params={"project": pid, "objectType": "PROJECT", "date": before}
    ).json()
    assert len(since["data"]) == 2
    later = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S+0000")
    window = admin.get(
        "/activities",
        params=[("project", pid), ("objectType", "PROJECT"), ("date", before), ("date", later)],
    )
    assert len(window.json()["data"]) == 2
    future = admin.get("/activities", params={"project": pid, "date": later}).json()
    assert future["data"] == [] and future["meta"]["pageInfo"]["totalResults"] == 0

    one = admin.get(f"/activities/{activity['id']}", params={"include": "data.user"}).json()
    assert one["data"]["id"] == activity["id"]
    assert one["linked"]["users"][str(activity["user"])]["username"] == "admin"


def test_user_changes_are_in_every_project_feed(admin: httpx.Client, make_user: MakeUser) -> None:
    pid = new_project(admin, projectKey=project_key("UF"), fields={"name": "Users"})
    _user_id, username, _pw, _client = make_user()
    feed = admin.get(
        "/activities", params={"project": pid, "objectType": "USER", "eventType": "CREATE"}
    ).json()
    assert any(username in a["details"] for a in feed["data"])
