"""``/usergroups``: the whole family, its members, and what non-admins may not do."""

from __future__ import annotations

import httpx

from tests.e2e.api import MakeUser, assert_error, new_project, project_key, unique
from tests.e2e.topology import System


def _group(admin: httpx.Client, **body: object) -> int:
    body.setdefault("name", unique("grp"))
    response = admin.post("/usergroups", json=body)
    assert response.status_code == 201, response.text
    return int(response.json()["meta"]["id"])


def _all_group_ids(admin: httpx.Client, **params: str | int) -> list[int]:
    """Every group id, page by page, checking the page info on the way."""
    ids: list[int] = []
    start = 0
    while True:
        page = admin.get("/usergroups", params={**params, "startAt": start, "maxResults": 50})
        assert page.status_code == 200, page.text
        body = page.json()
        info = body["meta"]["pageInfo"]
        assert info["startIndex"] == start
        assert info["resultCount"] == len(body["data"])
        ids += [g["id"] for g in body["data"]]
        start += 50
        if start >= info["totalResults"]:
            assert len(ids) == info["totalResults"]
            return ids


def test_create_then_get(admin: httpx.Client) -> None:
    name = unique("Board")
    response = admin.post("/usergroups", json={"name": name, "description": "Change board"})
    assert response.status_code == 201
    meta = response.json()["meta"]
    assert meta["status"] == "Created"
    assert meta["location"].endswith(f"/rest/v1/usergroups/{meta['id']}")
    body = admin.get(f"/usergroups/{meta['id']}").json()
    assert body["data"] == {
        "id": meta["id"],
        "name": name,
        "description": "Change board",
        "type": "usergroups",
    }
    assert body["links"]["data.project"]["href"].endswith("/rest/v1/projects/{data.project}")


def test_list_and_the_project_filter(admin: httpx.Client) -> None:
    project = new_project(admin)
    other_project = new_project(admin)
    in_project = [_group(admin, project=project) for _ in range(2)]
    elsewhere = _group(admin, project=other_project)
    org_wide = _group(admin)

    listed = admin.get("/usergroups", params={"project": project, "include": "data.project"})
    body = listed.json()
    assert [g["id"] for g in body["data"]] == in_project
    assert all(g["project"] == project for g in body["data"])
    assert body["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 2, "totalResults": 2}
    assert list(body["linked"]["projects"]) == [str(project)]
    second = admin.get("/usergroups", params={"project": project, "startAt": 1, "maxResults": 1})
    assert [g["id"] for g in second.json()["data"]] == in_project[1:]
    assert second.json()["meta"]["pageInfo"]["totalResults"] == 2

    everything = _all_group_ids(admin)
    assert {*in_project, elsewhere, org_wide} <= set(everything)
    assert everything == sorted(everything)
    none = admin.get("/usergroups", params={"project": 987654321}).json()
    assert none["data"] == []
    assert none["meta"]["pageInfo"]["totalResults"] == 0


def test_groups_of_a_project(admin: httpx.Client) -> None:
    key = project_key("GP")
    project = new_project(admin, key)
    group = admin.post("/usergroups", json={"name": unique("pg"), "project": project}).json()[
        "meta"
    ]["id"]
    listed = admin.get("/usergroups", params={"project": project, "include": "data.project"}).json()
    assert [g["id"] for g in listed["data"]] == [group]
    assert listed["linked"]["projects"][str(project)]["projectKey"] == key


def test_a_group_project_must_exist(admin: httpx.Client) -> None:
    assert_error(
        admin.post("/usergroups", json={"name": unique("ghost"), "project": 987654321}),
        400,
        "project",
        "987654321",
    )
    group = _group(admin)
    assert_error(admin.put(f"/usergroups/{group}", json={"project": 987654321}), 400, "987654321")
    assert "project" not in admin.get(f"/usergroups/{group}").json()["data"]


def test_update(admin: httpx.Client) -> None:
    group = _group(admin, description="old")
    name = unique("Renamed")
    response = admin.put(f"/usergroups/{group}", json={"name": name, "description": "new"})
    assert response.status_code == 200
    assert response.json()["meta"]["status"] == "OK"
    data = admin.get(f"/usergroups/{group}").json()["data"]
    assert (data["name"], data["description"]) == (name, "new")
    # Only what is sent changes.
    assert admin.put(f"/usergroups/{group}", json={"description": "newer"}).status_code == 200
    assert admin.get(f"/usergroups/{group}").json()["data"]["name"] == name
    # A whole GET object is accepted; its id and type are ignored.
    data = admin.get(f"/usergroups/{group}").json()["data"]
    data["description"] = "from a GET body"
    assert admin.put(f"/usergroups/{group}", json=data).status_code == 200
    assert admin.get(f"/usergroups/{group}").json()["data"] == data
    # Into a project.
    project = new_project(admin)
    assert admin.put(f"/usergroups/{group}", json={"project": project}).status_code == 200
    assert admin.get(f"/usergroups/{group}").json()["data"]["project"] == project

    assert_error(admin.put(f"/usergroups/{group}", json={"name": ""}), 400, "name")
    assert_error(admin.put(f"/usergroups/{group}", json={"name": "   "}), 400, "name")
    assert_error(admin.put("/usergroups/987654321", json={"name": unique("x")}), 404, "987654321")


def test_names_are_unique_within_their_scope(admin: httpx.Client) -> None:
    name = unique("Same")
    first = _group(admin, name=name)
    assert_error(admin.post("/usergroups", json={"name": name}), 400, "already exists")
    other = _group(admin)
    assert_error(admin.put(f"/usergroups/{other}", json={"name": name}), 400, "already exists")
    # Renaming a group to its own name is no conflict.
    assert admin.put(f"/usergroups/{first}", json={"name": name}).status_code == 200
    # The same name in a project is another group.
    project = new_project(admin)
    in_project = _group(admin, name=name, project=project)
    assert_error(
        admin.post("/usergroups", json={"name": name, "project": project}), 400, "already exists"
    )
    assert in_project != first


def test_delete(admin: httpx.Client, make_user: MakeUser) -> None:
    project = new_project(admin)
    group = _group(admin, project=project)
    user, _n, _p, _c = make_user()
    assert admin.post(f"/usergroups/{group}/users", json={"user": user}).status_code == 201
    response = admin.delete(f"/usergroups/{group}")
    assert response.status_code == 204
    assert response.content == b""
    assert_error(admin.get(f"/usergroups/{group}"), 404, str(group))
    assert_error(admin.get(f"/usergroups/{group}/users"), 404)
    assert_error(admin.delete(f"/usergroups/{group}"), 404)
    assert_error(admin.post(f"/usergroups/{group}/users", json={"user": user}), 404)
    assert admin.get("/usergroups", params={"project": project}).json()["data"] == []
    assert admin.get(f"/users/{user}").status_code == 200  # members are not deleted


def test_a_deleted_name_is_free_but_its_id_is_not_reused(
    admin: httpx.Client, system: System
) -> None:
    name = unique("reuse")
    first = _group(admin, name=name)
    assert admin.delete(f"/usergroups/{first}").status_code == 204
    again = _group(admin, name=name)
    assert again > first
    assert_error(admin.get(f"/usergroups/{first}"), 404)


def test_members(admin: httpx.Client, make_user: MakeUser) -> None:
    group = _group(admin)
    empty = admin.get(f"/usergroups/{group}/users").json()
    assert empty["data"] == []
    assert empty["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 0, "totalResults": 0}

    users = [make_user()[0] for _ in range(3)]
    for user in users:
        added = admin.post(f"/usergroups/{group}/users", json={"user": user})
        assert added.status_code == 201, added.text
        assert added.json()["meta"]["status"] == "Created"
    members = admin.get(f"/usergroups/{group}/users").json()
    assert [m["id"] for m in members["data"]] == users
    assert all(m["type"] == "users" for m in members["data"])
    assert members["meta"]["pageInfo"]["totalResults"] == 3
    page = admin.get(f"/usergroups/{group}/users", params={"startAt": 1, "maxResults": 1}).json()
    assert [m["id"] for m in page["data"]] == users[1:2]
    assert page["meta"]["pageInfo"] == {"startIndex": 1, "resultCount": 1, "totalResults": 3}

    assert_error(
        admin.post(f"/usergroups/{group}/users", json={"user": users[0]}), 400, "already exists"
    )
    assert_error(
        admin.post(f"/usergroups/{group}/users", json={"user": 987654321}), 400, "987654321"
    )
    assert_error(
        admin.post("/usergroups/987654321/users", json={"user": users[0]}), 404, "987654321"
    )

    removed = admin.delete(f"/usergroups/{group}/users/{users[1]}")
    assert removed.status_code == 204
    assert removed.content == b""
    after = admin.get(f"/usergroups/{group}/users").json()
    assert [m["id"] for m in after["data"]] == [users[0], users[2]]
    assert after["meta"]["pageInfo"]["totalResults"] == 2
    assert_error(admin.delete(f"/usergroups/{group}/users/{users[1]}"), 404, "not a member")
    assert_error(admin.delete(f"/usergroups/{group}/users/987654321"), 404)
    assert_error(admin.delete(f"/usergroups/987654321/users/{users[0]}"), 404, "987654321")
    # A removed member can be added again.
    assert admin.post(f"/usergroups/{group}/users", json={"user": users[1]}).status_code == 201


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
    assert twice.status_code == 400
    assert "already exists" in twice.json()["meta"]["message"]
    members = admin.get(f"/usergroups/{group}/users").json()
    assert [m["id"] for m in members["data"]] == [user]
    assert admin.post(f"/usergroups/{group}/users", json={"user": 987654}).status_code == 400
    removed = admin.delete(f"/usergroups/{group}/users/{user}")
    assert removed.status_code == 204
    assert removed.content == b""
    assert admin.delete(f"/usergroups/{group}/users/{user}").status_code == 404

    deleted = admin.delete(f"/usergroups/{group}")
    assert deleted.status_code == 204
    assert deleted.content == b""
    assert admin.get(f"/usergroups/{group}").status_code == 404


def test_what_non_admins_may_not_do(admin: httpx.Client, make_user: MakeUser) -> None:
    name = unique("Guarded")
    group = _group(admin, name=name, description="keep")
    member, _n, _p, member_client = make_user()
    outsider, _n2, _p2, outsider_client = make_user()
    assert admin.post(f"/usergroups/{group}/users", json={"user": member}).status_code == 201

    for client in (member_client, outsider_client):
        for response in (
            client.get("/usergroups"),
            client.post("/usergroups", json={"name": unique("mine")}),
            client.put(f"/usergroups/{group}", json={"name": unique("taken")}),
            client.delete(f"/usergroups/{group}"),
            client.post(f"/usergroups/{group}/users", json={"user": outsider}),
            client.delete(f"/usergroups/{group}/users/{member}"),
        ):
            assert_error(response, 401)
    # Members may read their group and its members; others may not.
    assert member_client.get(f"/usergroups/{group}").json()["data"]["name"] == name
    members = member_client.get(f"/usergroups/{group}/users").json()["data"]
    assert [m["id"] for m in members] == [member]
    assert_error(outsider_client.get(f"/usergroups/{group}"), 401, str(group))
    assert_error(outsider_client.get(f"/usergroups/{group}/users"), 401)
    # Nothing changed.
    assert admin.get(f"/usergroups/{group}").json()["data"]["description"] == "keep"
    assert [m["id"] for m in admin.get(f"/usergroups/{group}/users").json()["data"]] == [member]


def test_anonymous_callers_get_401(anonymous: httpx.Client) -> None:
    for response in (
        anonymous.get("/usergroups"),
        anonymous.get("/usergroups/1"),
        anonymous.post("/usergroups", json={"name": unique("anon")}),
        anonymous.delete("/usergroups/1"),
    ):
        assert_error(response, 401)
