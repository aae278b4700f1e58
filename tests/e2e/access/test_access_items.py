"""The access matrix for projects and items: each role x read, list, create, change, delete.

Every cell is a request by the user holding that role; the expected answer is 2xx where
the role allows the action and 401 with a message where it does not.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import MATRIX_ROLES, Team, assert_error, create_item, grant, new_project


def _body(project: dict[str, Any], name: str) -> dict[str, Any]:
    return {
        "project": project["id"],
        "itemType": project["types"]["REQ"]["id"],
        "fields": {"name": name},
    }


def test_items_by_role(team: Team, admin: httpx.Client) -> None:
    project = team.project
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        item = create_item(admin, project, f"Item for {role}")
        read = client.get(f"/items/{item}")
        listed = client.get("/items", params={"project": project["id"]})
        created = client.post("/items", json=_body(project, f"By {role}"))
        changed = client.patch(
            f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": role}]
        )
        put = client.put(f"/items/{item}", json={"fields": {"name": role}})
        locked = client.put(f"/items/{item}/lock", json={"locked": True})
        if locked.status_code == 200:
            client.put(f"/items/{item}/lock", json={"locked": False})
        removed = client.delete(f"/items/{item}")
        if may_read[role]:
            assert read.status_code == 200, (role, read.text)
            allowed = read.json()["data"]["resources"]["self"]["allowed"]
            assert allowed == (["GET", "PUT", "DELETE"] if may_write[role] else ["GET"]), role
            assert item in [i["id"] for i in listed.json()["data"]], role
        else:
            assert_error(read, 401, "no access", f"item {item}")
            assert_error(listed, 401, "no access", f"project {project['id']}")
        for response in (created, changed, put, locked, removed):
            if may_write[role]:
                assert response.status_code in (200, 201, 204), (role, response.text)
            else:
                assert_error(response, 401, "item" if response is not created else "project")


def test_refusals_say_which_role_is_needed(team: Team, admin: httpx.Client) -> None:
    item = create_item(admin, team.project, "Needs a writer")
    refused = team.clients["READ_ONLY"].delete(f"/items/{item}")
    assert_error(refused, 401, "READ_ONLY", "READ_WRITE", f"item {item}")


def test_projects_by_role(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    may_read, may_admin = team.expect("READ_ONLY"), team.expect("PROJECT_ADMIN")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        read = client.get(f"/projects/{project}")
        listed = [
            p["id"] for p in client.get("/projects", params={"maxResults": 50}).json()["data"]
        ]
        change = client.put(f"/projects/{project}", json={"fields": {"description": role}})
        permissions = client.get(f"/projects/{project}/permissions")
        assert (read.status_code == 200) is may_read[role], (role, read.text)
        assert (project in listed) is may_read[role] or role == "ORG_ADMIN", role
        assert (change.status_code == 200) is may_admin[role], (role, change.text)
        assert (permissions.status_code == 200) is may_admin[role], (role, permissions.text)
        if not may_admin[role]:
            assert_error(change, 401)
            assert_error(permissions, 401)


def test_a_project_admin_manages_the_projects_permissions(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    owner = team.clients["PROJECT_ADMIN"]
    newcomer = team.ids["NONE"]
    assert_error(team.clients["NONE"].get(f"/projects/{project}"), 401)
    entries = owner.put(
        f"/projects/{project}/permissions", json=[{"user": newcomer, "role": "READ_ONLY"}]
    ).json()["data"]
    assert {"user": newcomer, "role": "READ_ONLY", "project": project} | {
        "id": entries[-1]["id"],
        "type": "permissions",
    } in entries
    assert team.clients["NONE"].get(f"/projects/{project}").status_code == 200
    # Removed mid-session: the very next request is refused.
    gone = owner.delete(f"/projects/{project}/permissions", params={"user": newcomer})
    assert gone.status_code == 204
    assert_error(team.clients["NONE"].get(f"/projects/{project}"), 401)
    assert_error(
        owner.delete(f"/projects/{project}/permissions", params={"user": newcomer}),
        404,
        f"user {newcomer}",
    )
    # A project admin cannot touch another project's permissions.
    other = new_project(admin)
    assert_error(owner.get(f"/projects/{other}/permissions"), 401)


def test_permission_bodies_are_checked(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    url = f"/projects/{project}/permissions"
    assert_error(admin.put(url, json=[{"role": "READ_ONLY"}]), 400, "user", "userGroup")
    assert_error(
        admin.put(url, json=[{"user": team.ids["NONE"], "userGroup": 1, "role": "READ_ONLY"}]),
        400,
        "exactly one",
    )
    assert_error(admin.put(url, json=[{"user": team.ids["NONE"], "role": "OWNER"}]), 400, "role")
    assert_error(admin.put(url, json=[{"user": 987654321, "role": "READ_ONLY"}]), 400, "987654321")
    assert_error(admin.delete(url), 400, "user")
    assert_error(admin.get("/projects/987654321/permissions"), 404, "987654321")


def test_post_replaces_every_entry(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    url = f"/projects/{project}/permissions"
    reader = team.ids["READ_ONLY"]
    replaced = admin.post(url, json=[{"user": reader, "role": "READ_WRITE"}])
    assert replaced.status_code == 200, replaced.text
    assert [(e["user"], e["role"]) for e in replaced.json()["data"]] == [(reader, "READ_WRITE")]
    assert_error(team.clients["PROJECT_ADMIN"].get(f"/projects/{project}"), 401)
    item = create_item(team.clients["READ_ONLY"], team.project, "Now a writer")
    assert item > 0


def test_roles_through_a_group_and_a_folder(admin: httpx.Client, make_user: Any) -> None:
    folder = admin.post("/projects", json={"isFolder": True, "fields": {"name": "Division"}})
    folder_id = folder.json()["meta"]["id"]
    inside = new_project(admin, parent=folder_id)
    user_id, _n, _p, client = make_user()
    group = admin.post("/usergroups", json={"name": f"Readers {user_id}"}).json()["meta"]["id"]
    grant(admin, folder_id, "READ_ONLY", group=group)
    assert_error(client.get(f"/projects/{inside}"), 401)
    assert admin.post(f"/usergroups/{group}/users", json={"user": user_id}).status_code == 201
    assert client.get(f"/projects/{inside}").status_code == 200
    assert client.get(f"/projects/{folder_id}").status_code == 200
    # A project created in the folder later is reached as well.
    later = new_project(admin, parent=folder_id)
    assert client.get(f"/projects/{later}").status_code == 200
    assert admin.delete(f"/usergroups/{group}/users/{user_id}").status_code == 204
    assert_error(client.get(f"/projects/{inside}"), 401)


def test_a_folder_admin_creates_projects_inside_and_owns_them(
    admin: httpx.Client, make_user: Any
) -> None:
    folder = admin.post("/projects", json={"isFolder": True, "fields": {"name": "Team space"}})
    folder_id = folder.json()["meta"]["id"]
    user_id, _n, _p, client = make_user()
    grant(admin, folder_id, "PROJECT_ADMIN", user=user_id)
    made = client.post(
        "/projects",
        json={"projectKey": f"FA{user_id}", "parent": folder_id, "fields": {"name": "x"}},
    )
    assert made.status_code == 201, made.text
    mine = made.json()["meta"]["id"]
    entries = client.get(f"/projects/{mine}/permissions").json()["data"]
    assert [(e.get("user"), e["role"]) for e in entries] == [(user_id, "PROJECT_ADMIN")]
    assert_error(
        client.post("/projects", json={"projectKey": f"TOP{user_id}", "fields": {"name": "y"}}),
        401,
        "top level",
    )
