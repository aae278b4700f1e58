"""Users and user groups over HTTP."""

from __future__ import annotations

import httpx

from tests.e2e.harness import MakeUser, new_project, project_key, unique


def test_create_then_read_a_user(admin: httpx.Client) -> None:
    name = unique("carol")
    body = {
        "username": name,
        "password": "pw",
        "firstName": "Carol",
        "lastName": "C",
        "email": f"{name}@example.com",
        "licenseType": "NAMED",
        "title": "Tester",
    }
    created = admin.post("/users", json=body)
    assert created.status_code == 201
    meta = created.json()["meta"]
    assert meta["status"] == "Created"
    assert meta["location"].endswith(f"/rest/v1/users/{meta['id']}")
    user = admin.get(f"/users/{meta['id']}").json()["data"]
    assert (user["username"], user["title"], user["active"]) == (name, "Tester", True)
    assert "password" not in user


def test_filters_and_paging(admin: httpx.Client, make_user: MakeUser) -> None:
    tag = unique("Fam")
    ids = [make_user(lastName=tag)[0] for _ in range(3)]
    page = admin.get("/users", params={"lastName": tag, "maxResults": 2}).json()
    assert page["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 2, "totalResults": 3}
    rest = admin.get("/users", params={"lastName": tag, "startAt": 2, "maxResults": 2}).json()
    assert rest["meta"]["pageInfo"] == {"startIndex": 2, "resultCount": 1, "totalResults": 3}
    assert [u["id"] for u in page["data"] + rest["data"]] == ids
    one = admin.get(
        "/users", params=[("lastName", tag), ("username", "nobody-x"), ("username", "admin")]
    )
    assert one.json()["meta"]["pageInfo"]["totalResults"] == 0
    empty = admin.get("/users", params={"email": "nobody@nowhere.invalid"}).json()
    assert empty["data"] == [] and empty["meta"]["pageInfo"]["totalResults"] == 0


def test_inactive_users_are_hidden_unless_asked(admin: httpx.Client, make_user: MakeUser) -> None:
    user_id, username, _pw, _client = make_user()
    assert (
        admin.put(f"/users/{user_id}/active", json={"active": False}).json()["meta"]["status"]
        == "OK"
    )
    hidden = admin.get("/users", params={"username": username}).json()
    assert hidden["meta"]["pageInfo"]["totalResults"] == 0
    shown = admin.get("/users", params={"username": username, "includeInactive": "true"}).json()
    assert [u["active"] for u in shown["data"]] == [False]


def test_put_updates_and_ignores_read_only_members(
    admin: httpx.Client, make_user: MakeUser
) -> None:
    user_id, _name, _pw, _client = make_user()
    data = admin.get(f"/users/{user_id}").json()["data"]
    data.update({"title": "Lead", "location": "Berlin"})
    response = admin.put(f"/users/{user_id}", json=data)
    assert response.status_code == 200 and response.json()["meta"]["status"] == "OK"
    after = admin.get(f"/users/{user_id}").json()["data"]
    assert (after["title"], after["location"], after["active"]) == ("Lead", "Berlin", True)
    refused = admin.put(f"/users/{user_id}", json={"password": "new"})
    assert refused.status_code == 400 and "password" in refused.json()["meta"]["message"]


def test_duplicate_username(admin: httpx.Client, make_user: MakeUser) -> None:
    _id, username, _pw, _client = make_user()
    again = admin.post(
        "/users",
        json={
            "username": username.upper(),
            "password": "pw",
            "firstName": "A",
            "lastName": "B",
            "email": "dup@example.com",
            "licenseType": "NAMED",
        },
    )
    assert again.status_code == 400
    assert "already exists" in again.json()["meta"]["message"]


def test_what_a_normal_user_may_see(admin: httpx.Client, make_user: MakeUser) -> None:
    me, _name, _pw, client = make_user()
    other, _n, _p, _c = make_user()
    assert client.get("/users/current").json()["data"]["id"] == me
    assert client.get(f"/users/{me}").status_code == 200
    assert client.get(f"/users/{other}").status_code == 401
    for path in ("/users", "/usergroups"):
        response = client.get(path)
        assert response.status_code == 401
        assert "administrators" in response.json()["meta"]["message"]
    assert client.post("/usergroups", json={"name": unique("g")}).status_code == 401
    assert client.put(f"/users/{me}", json={"title": "Self-made"}).status_code == 200
    assert client.put(f"/users/{other}", json={"title": "No"}).status_code == 401
    group = admin.post("/usergroups", json={"name": unique("team")}).json()["meta"]["id"]
    for user in (me, other):
        assert admin.post(f"/usergroups/{group}/users", json={"user": user}).status_code == 201
    assert client.get(f"/users/{other}").status_code == 200  # they share a group now
    assert client.get(f"/usergroups/{group}").status_code == 200


def test_group_family(admin: httpx.Client, make_user: MakeUser) -> None:
    name = unique("Reviewers")
    created = admin.post("/usergroups", json={"name": name, "description": "Review board"})
    assert created.status_code == 201
    group = created.json()["meta"]["id"]
    assert admin.post("/usergroups", json={"name": name}).status_code == 400
    got = admin.get(f"/usergroups/{group}").json()["data"]
    assert (got["name"], got["description"], got["type"]) == (name, "Review board", "usergroups")
    assert admin.put(f"/usergroups/{group}", json={"description": "New"}).status_code == 200
    assert admin.get(f"/usergroups/{group}").json()["data"]["description"] == "New"
    listed = admin.get("/usergroups", params={"maxResults": 50}).json()
    assert listed["meta"]["pageInfo"]["totalResults"] >= 1

    user, _n, _p, _c = make_user()
    assert admin.post(f"/usergroups/{group}/users", json={"user": user}).status_code == 201
    twice = admin.post(f"/usergroups/{group}/users", json={"user": user})
    assert twice.status_code == 400 and "already exists" in twice.json()["meta"]["message"]
    members = admin.get(f"/usergroups/{group}/users").json()
    assert [m["id"] for m in members["data"]] == [user]
    assert admin.post(f"/usergroups/{group}/users", json={"user": 987654}).status_code == 400
    removed = admin.delete(f"/usergroups/{group}/users/{user}")
    assert removed.status_code == 204 and removed.content == b""
    assert admin.delete(f"/usergroups/{group}/users/{user}").status_code == 404

    deleted = admin.delete(f"/usergroups/{group}")
    assert deleted.status_code == 204 and deleted.content == b""
    assert admin.get(f"/usergroups/{group}").status_code == 404


def test_groups_of_a_project(admin: httpx.Client) -> None:
    key = project_key("GP")
    project = new_project(admin, key)
    group = admin.post("/usergroups", json={"name": unique("pg"), "project": project}).json()[
        "meta"
    ]["id"]
    listed = admin.get("/usergroups", params={"project": project, "include": "data.project"}).json()
    assert [g["id"] for g in listed["data"]] == [group]
    assert listed["linked"]["projects"][str(project)]["projectKey"] == key
