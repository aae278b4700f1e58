"""``/projects``: projects and project folders, keys, parents, includes, permissions."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.api import MakeUser, assert_error, new_project, project_key, unique


def _get(admin: httpx.Client, project: int) -> dict[str, Any]:
    response = admin.get(f"/projects/{project}")
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def test_create_then_get(admin: httpx.Client) -> None:
    key = project_key()
    response = admin.post(
        "/projects", json={"projectKey": key, "fields": {"name": "Apollo", "description": "Moon"}}
    )
    assert response.status_code == 201
    meta = response.json()["meta"]
    assert meta["status"] == "Created"
    assert meta["location"].endswith(f"/rest/v1/projects/{meta['id']}")
    data = _get(admin, meta["id"])
    admin_id = admin.get("/users/current").json()["data"]["id"]
    assert data["id"] == meta["id"]
    assert data["type"] == "projects"
    assert (data["projectKey"], data["isFolder"]) == (key, False)
    assert data["fields"] == {"name": "Apollo", "description": "Moon", "projectKey": key}
    assert data["createdBy"] == data["modifiedBy"] == admin_id
    assert str(data["createdDate"]).endswith("+0000")
    assert "parent" not in data


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
    assert updated.status_code == 200
    assert updated.json()["meta"]["status"] == "OK"
    after = admin.get(f"/projects/{pid}").json()["data"]
    assert after["fields"]["name"] == "Renamed"
    assert after["modifiedDate"] >= data["modifiedDate"]


def test_project_key_is_required_unless_folder(admin: httpx.Client) -> None:
    assert_error(admin.post("/projects", json={"fields": {"name": "No key"}}), 400, "projectKey")
    assert_error(
        admin.post("/projects", json={"isFolder": False, "fields": {"name": "No key"}}),
        400,
        "projectKey",
    )
    folder = new_project(admin, isFolder=True)
    data = _get(admin, folder)
    assert data["isFolder"] is True
    assert "projectKey" not in data


def test_project_key_rules(admin: httpx.Client, make_user: MakeUser) -> None:
    key = project_key("DUP")
    new_project(admin, projectKey=key, fields={"name": "a"})
    duplicate = admin.post("/projects", json={"projectKey": key, "fields": {"name": "b"}})
    assert duplicate.status_code == 400
    assert "already exists" in duplicate.json()["meta"]["message"]
    missing = admin.post("/projects", json={"fields": {"name": "no key"}})
    assert missing.status_code == 400
    assert "projectKey" in missing.json()["meta"]["message"]
    bad = admin.post("/projects", json={"projectKey": "9 lives", "fields": {"name": "x"}})
    assert bad.status_code == 400
    assert "projectKey" in bad.json()["meta"]["message"]
    _id, _n, _p, client = make_user()
    refused = client.post(
        "/projects", json={"projectKey": project_key("U"), "fields": {"name": "x"}}
    )
    assert refused.status_code == 401
    assert client.get("/projects").status_code == 200


def test_fields_name_is_required(admin: httpx.Client) -> None:
    for body in (
        {"projectKey": project_key()},
        {"projectKey": project_key(), "fields": {}},
        {"projectKey": project_key(), "fields": {"description": "nameless"}},
        {"isFolder": True, "fields": {"name": "   "}},
    ):
        assert_error(admin.post("/projects", json=body), 400, "name")
    assert_error(
        admin.post("/projects", json={"projectKey": project_key(), "fields": {"name": ""}}),
        400,
        "name",
    )
    project = new_project(admin)
    assert_error(admin.put(f"/projects/{project}", json={"fields": {"name": None}}), 400, "name")


def test_list_pages_reach_the_total(admin: httpx.Client) -> None:
    created = [new_project(admin) for _ in range(3)]
    first = admin.get("/projects", params={"maxResults": 2}).json()
    total = first["meta"]["pageInfo"]["totalResults"]
    assert first["meta"]["pageInfo"]["resultCount"] == 2
    seen: list[int] = []
    start = 0
    while start < total:
        page = admin.get("/projects", params={"startAt": start, "maxResults": 2}).json()
        info = page["meta"]["pageInfo"]
        assert info["startIndex"] == start
        assert info["resultCount"] == len(page["data"]) == min(2, total - start)
        assert info["totalResults"] == total
        assert all(p["type"] == "projects" for p in page["data"])
        seen += [p["id"] for p in page["data"]]
        start += 2
    assert len(seen) == len(set(seen)) == total
    assert set(created) <= set(seen)
    beyond = admin.get("/projects", params={"startAt": total}).json()
    assert beyond["data"] == []
    assert beyond["meta"]["pageInfo"] == {
        "startIndex": total,
        "resultCount": 0,
        "totalResults": total,
    }


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


def test_put_changes_name_and_description(admin: httpx.Client) -> None:
    key = project_key()
    project = new_project(admin, projectKey=key, fields={"name": "Before", "description": "old"})
    before = _get(admin, project)
    response = admin.put(
        f"/projects/{project}", json={"fields": {"name": "After", "description": "new"}}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["meta"]["status"] == "OK"
    after = _get(admin, project)
    assert after["fields"] == {"name": "After", "description": "new", "projectKey": key}
    assert after["projectKey"] == key
    assert str(after["modifiedDate"]) >= str(before["modifiedDate"])
    assert after["createdDate"] == before["createdDate"]
    # Leaving a field out keeps it.
    assert admin.put(f"/projects/{project}", json={"fields": {"name": "Again"}}).status_code == 200
    assert _get(admin, project)["fields"] == {
        "name": "Again",
        "description": "new",
        "projectKey": key,
    }


def test_put_back_a_whole_get_object(admin: httpx.Client) -> None:
    folder = new_project(admin, isFolder=True)
    project = new_project(admin, parent=folder)
    data = _get(admin, project)
    data["fields"]["description"] = "round trip"
    response = admin.put(f"/projects/{project}", json=data)
    assert response.status_code == 200, response.text
    after = _get(admin, project)
    assert after["fields"] == data["fields"]
    assert (after["parent"], after["projectKey"], after["isFolder"]) == (
        folder,
        data["projectKey"],
        False,
    )


def test_parents_folders_and_moving_to_the_top(admin: httpx.Client) -> None:
    first = new_project(admin, isFolder=True)
    second = new_project(admin, isFolder=True)
    project = new_project(admin, parent=first)
    assert _get(admin, project)["parent"] == first
    assert admin.put(f"/projects/{project}", json={"parent": second}).status_code == 200
    assert _get(admin, project)["parent"] == second
    # Folders nest.
    assert admin.put(f"/projects/{second}", json={"parent": first}).status_code == 200
    assert _get(admin, second)["parent"] == first
    # Leaving parent out keeps it; null moves to the top.
    assert admin.put(f"/projects/{project}", json={"fields": {"name": "kept"}}).status_code == 200
    assert _get(admin, project)["parent"] == second
    assert admin.put(f"/projects/{project}", json={"parent": None}).status_code == 200
    assert "parent" not in _get(admin, project)


def test_folders(admin: httpx.Client) -> None:
    folder = new_project(admin, isFolder=True, fields={"name": unique("Folder")})
    child = new_project(admin, projectKey=project_key("CH"), parent=folder, fields={"name": "c"})
    assert admin.get(f"/projects/{child}").json()["data"]["parent"] == folder
    assert "projectKey" not in admin.get(f"/projects/{folder}").json()["data"]
    not_folder = admin.post(
        "/projects",
        json={"projectKey": project_key("X"), "parent": child, "fields": {"name": "x"}},
    )
    assert not_folder.status_code == 400
    assert "not a folder" in not_folder.json()["meta"]["message"]
    assert admin.put(f"/projects/{child}", json={"parent": None}).status_code == 200
    assert "parent" not in admin.get(f"/projects/{child}").json()["data"]


def test_a_parent_must_be_an_existing_folder(admin: httpx.Client) -> None:
    plain = new_project(admin)
    assert_error(
        admin.post(
            "/projects",
            json={"projectKey": project_key(), "parent": plain, "fields": {"name": "x"}},
        ),
        400,
        "not a folder",
    )
    assert_error(
        admin.post(
            "/projects",
            json={"projectKey": project_key(), "parent": 987654321, "fields": {"name": "x"}},
        ),
        400,
        "987654321",
    )
    other = new_project(admin)
    assert_error(admin.put(f"/projects/{other}", json={"parent": plain}), 400, "not a folder")
    assert_error(admin.put(f"/projects/{other}", json={"parent": 987654321}), 400, "987654321")
    assert "parent" not in _get(admin, other)


def test_a_folder_cannot_move_into_itself(admin: httpx.Client) -> None:
    outer = new_project(admin, isFolder=True)
    inner = new_project(admin, isFolder=True, parent=outer)
    assert_error(admin.put(f"/projects/{outer}", json={"parent": outer}), 400, "itself")
    assert_error(admin.put(f"/projects/{outer}", json={"parent": inner}), 400, "itself")
    assert "parent" not in _get(admin, outer)


def test_only_an_empty_folder_may_become_a_project(admin: httpx.Client) -> None:
    folder = new_project(admin, isFolder=True)
    child = new_project(admin, parent=folder)
    assert_error(
        admin.put(f"/projects/{folder}", json={"isFolder": False, "projectKey": project_key()}),
        400,
        "isFolder",
        str(child),
    )
    assert _get(admin, folder)["isFolder"] is True
    # Once empty, it may; it then needs a key.
    assert admin.put(f"/projects/{child}", json={"parent": None}).status_code == 200
    assert_error(admin.put(f"/projects/{folder}", json={"isFolder": False}), 400, "projectKey")
    key = project_key()
    assert (
        admin.put(f"/projects/{folder}", json={"isFolder": False, "projectKey": key}).status_code
        == 200
    )
    data = _get(admin, folder)
    assert (data["isFolder"], data["projectKey"]) == (False, key)


def test_project_keys_are_unique(admin: httpx.Client) -> None:
    key = project_key()
    new_project(admin, projectKey=key)
    assert_error(
        admin.post("/projects", json={"projectKey": key, "fields": {"name": "twin"}}),
        400,
        "already exists",
    )
    other = new_project(admin)
    assert_error(admin.put(f"/projects/{other}", json={"projectKey": key}), 400, "already exists")
    assert _get(admin, other)["projectKey"] != key


@pytest.mark.parametrize("key", ["9LIVES", "HAS SPACE", "DASH-ED", "_LEAD", "ÜMLAUT", "A.B"])
def test_bad_project_keys(admin: httpx.Client, key: str) -> None:
    assert_error(
        admin.post("/projects", json={"projectKey": key, "fields": {"name": "x"}}),
        400,
        "projectKey",
    )


def test_project_key_length(admin: httpx.Client) -> None:
    assert_error(
        admin.post("/projects", json={"projectKey": "K" * 33, "fields": {"name": "x"}}),
        400,
        "projectKey",
        "32",
    )
    assert new_project(admin, projectKey=project_key("K").ljust(32, "X"))


def test_date_fields_are_calendar_dates(admin: httpx.Client) -> None:
    for value in ("2024-13-01", "2023-02-29", "24-01-01"):
        body = {"projectKey": project_key(), "fields": {"name": "d", "date1": value}}
        assert_error(admin.post("/projects", json=body), 400, "date1")
    project = new_project(admin, fields={"name": "d", "date1": "2024-02-29"})
    assert _get(admin, project)["fields"]["date1"] == "2024-02-29"


def test_include_created_by(admin: httpx.Client) -> None:
    project = new_project(admin)
    admin_id = admin.get("/users/current").json()["data"]["id"]
    body = admin.get(f"/projects/{project}", params={"include": "data.createdBy"}).json()
    link = body["links"]["data.createdBy"]
    assert link["type"] == "users"
    assert link["href"].endswith("/rest/v1/users/{data.createdBy}")
    assert body["linked"]["users"][str(admin_id)]["username"] == "admin"
    listed = admin.get("/projects", params={"include": "data.createdBy", "maxResults": 50}).json()
    assert "data.createdBy" in listed["links"]
    assert str(admin_id) in listed["linked"]["users"]
    assert "linked" not in admin.get(f"/projects/{project}").json()


def test_unknown_projects_are_404(admin: httpx.Client) -> None:
    assert_error(admin.get("/projects/987654321"), 404, "987654321")
    assert_error(admin.put("/projects/987654321", json={"fields": {"name": "x"}}), 404, "987654321")


def test_users_read_projects_they_have_a_role_on_and_change_none_below_admin(
    admin: httpx.Client,
    make_user: MakeUser,
) -> None:
    project = new_project(admin, fields={"name": "Theirs"})
    user_id, _name, _pw, client = make_user()
    assert_error(
        client.post("/projects", json={"projectKey": project_key(), "fields": {"name": "x"}}),
        401,
        "administrators",
    )
    assert_error(client.post("/projects", json={"isFolder": True, "fields": {"name": "x"}}), 401)
    assert_error(client.get(f"/projects/{project}"), 401, "no access", str(project))
    assert project not in [p["id"] for p in client.get("/projects").json()["data"]]
    grant = [{"user": user_id, "role": "READ_WRITE"}]
    assert admin.put(f"/projects/{project}/permissions", json=grant).status_code == 200
    assert client.get(f"/projects/{project}").json()["data"]["fields"]["name"] == "Theirs"
    listed = client.get("/projects").json()
    assert [p["id"] for p in listed["data"]] == [project]
    assert listed["meta"]["pageInfo"]["totalResults"] == 1
    assert_error(
        client.put(f"/projects/{project}", json={"fields": {"name": "Mine"}}),
        401,
        "READ_WRITE",
        "PROJECT_ADMIN",
    )


def test_anonymous_callers_get_401(anonymous: httpx.Client) -> None:
    assert_error(anonymous.get("/projects"), 401)
    assert_error(
        anonymous.post("/projects", json={"projectKey": project_key(), "fields": {"name": "x"}}),
        401,
    )
