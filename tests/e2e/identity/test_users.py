"""``/users``: create, read, filters, paging, updates, activation and who may do what."""

from __future__ import annotations

import httpx

from tests.e2e.api import MakeUser, assert_error, eventually, unique, user_body
from tests.e2e.topology import System


def _ids(response: httpx.Response) -> list[int]:
    assert response.status_code == 200, response.text
    return [u["id"] for u in response.json()["data"]]


def test_post_returns_the_new_id_and_its_location(admin: httpx.Client) -> None:
    body = user_body(phone="+49 30 1234", title="Analyst", location="London")
    response = admin.post("/users", json=body)
    assert response.status_code == 201, response.text
    meta = response.json()["meta"]
    assert meta["status"] == "Created"
    assert isinstance(meta["id"], int)
    assert meta["location"].endswith(f"/rest/v1/users/{meta['id']}")
    assert response.headers["location"] == meta["location"]

    got = httpx.get(meta["location"], auth=admin.auth)
    assert got.status_code == 200
    data = got.json()["data"]
    expected = {k: v for k, v in body.items() if k != "password"}
    assert {k: data[k] for k in expected} == expected
    assert data["id"] == meta["id"]
    assert data["type"] == "users"
    assert data["active"] is True
    assert "avatarUrl" in data
    assert "password" not in data


def test_create_then_read_a_user(admin: httpx.Client) -> None:
    name = unique("carol")
    created = admin.post("/users", json=user_body(username=name, title="Tester"))
    assert created.status_code == 201
    meta = created.json()["meta"]
    assert meta["status"] == "Created"
    assert meta["location"].endswith(f"/rest/v1/users/{meta['id']}")
    user = admin.get(f"/users/{meta['id']}").json()["data"]
    assert (user["username"], user["title"], user["active"]) == (name, "Tester", True)
    assert "password" not in user


def test_get_an_unknown_user_is_404(admin: httpx.Client) -> None:
    assert_error(admin.get("/users/987654321"), 404, "987654321")


def test_filters_take_repeated_values(admin: httpx.Client, make_user: MakeUser) -> None:
    family = unique("Fam")
    first = make_user(lastName=family, firstName="Alpha")
    second = make_user(lastName=family, firstName="Beta")
    third = make_user(lastName=family, firstName="Gamma")
    emails = {u[0]: f"{u[1]}@example.com" for u in (first, second, third)}

    assert _ids(admin.get("/users", params={"lastName": family})) == [
        first[0],
        second[0],
        third[0],
    ]
    by_username = admin.get("/users", params=[("username", first[1]), ("username", third[1])])
    assert _ids(by_username) == [first[0], third[0]]
    by_email = admin.get(
        "/users", params=[("email", emails[second[0]]), ("email", emails[third[0]])]
    )
    assert _ids(by_email) == [second[0], third[0]]
    by_first_name = admin.get(
        "/users",
        params=[("lastName", family), ("firstName", "Alpha"), ("firstName", "Gamma")],
    )
    assert _ids(by_first_name) == [first[0], third[0]]
    # Different parameters must all match.
    both = admin.get("/users", params={"lastName": family, "username": second[1]})
    assert _ids(both) == [second[0]]
    neither = admin.get("/users", params={"lastName": family, "firstName": "Nobody"}).json()
    assert neither["data"] == []
    assert neither["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 0, "totalResults": 0}


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
    assert empty["data"] == []
    assert empty["meta"]["pageInfo"]["totalResults"] == 0


def test_a_deactivated_user_is_listed_only_with_include_inactive(
    admin: httpx.Client,
    make_user: MakeUser,
) -> None:
    family = unique("Inact")
    active = make_user(lastName=family)[0]
    inactive = make_user(lastName=family)[0]
    response = admin.put(f"/users/{inactive}/active", json={"active": False})
    assert response.status_code == 200
    assert response.json()["meta"]["status"] == "OK"

    hidden = admin.get("/users", params={"lastName": family}).json()
    assert [u["id"] for u in hidden["data"]] == [active]
    assert hidden["meta"]["pageInfo"]["totalResults"] == 1
    assert _ids(admin.get("/users", params={"lastName": family, "includeInactive": "false"})) == [
        active
    ]
    shown = admin.get("/users", params={"lastName": family, "includeInactive": "true"}).json()
    assert [(u["id"], u["active"]) for u in shown["data"]] == [(active, True), (inactive, False)]
    assert shown["meta"]["pageInfo"]["totalResults"] == 2
    # A single read still finds the inactive user.
    assert admin.get(f"/users/{inactive}").json()["data"]["active"] is False


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


def test_pages_report_start_count_and_total(admin: httpx.Client, make_user: MakeUser) -> None:
    family = unique("Page")
    ids = [make_user(lastName=family)[0] for _ in range(5)]
    seen: list[int] = []
    for start, count in ((0, 2), (2, 2), (4, 1)):
        page = admin.get(
            "/users", params={"lastName": family, "startAt": start, "maxResults": 2}
        ).json()
        assert page["meta"]["pageInfo"] == {
            "startIndex": start,
            "resultCount": count,
            "totalResults": 5,
        }
        assert len(page["data"]) == count
        seen += [u["id"] for u in page["data"]]
    assert seen == ids
    beyond = admin.get("/users", params={"lastName": family, "startAt": 10}).json()
    assert beyond["data"] == []
    assert beyond["meta"]["pageInfo"] == {"startIndex": 10, "resultCount": 0, "totalResults": 5}
    default = admin.get("/users", params={"lastName": family}).json()
    assert default["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 5, "totalResults": 5}
    empty = admin.get("/users", params={"username": unique("nobody")}).json()
    assert empty["data"] == []
    assert empty["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 0, "totalResults": 0}


def test_put_changes_fields_and_answers_json(admin: httpx.Client, make_user: MakeUser) -> None:
    user_id, username, _pw, _client = make_user()
    changes = {
        "firstName": "Grace",
        "lastName": "Hopper",
        "email": f"grace.{username}@example.com",
        "phone": "555-0100",
        "title": "Rear Admiral",
        "location": "Arlington",
    }
    response = admin.put(f"/users/{user_id}", json=changes)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["meta"]["status"] == "OK"
    data = admin.get(f"/users/{user_id}").json()["data"]
    assert {k: data[k] for k in changes} == changes
    assert data["username"] == username  # not sent, not changed
    # A field that is left out keeps its value.
    assert admin.put(f"/users/{user_id}", json={"title": "Commodore"}).status_code == 200
    after = admin.get(f"/users/{user_id}").json()["data"]
    assert (after["title"], after["firstName"]) == ("Commodore", "Grace")


def test_put_with_a_password_is_refused(admin: httpx.Client, make_user: MakeUser) -> None:
    user_id, _name, _pw, client = make_user()
    assert_error(admin.put(f"/users/{user_id}", json={"password": "new-secret"}), 400, "password")
    assert client.get("/users/current").status_code == 200  # the old password still works
    # What a client PUTs back from a whole object may carry "password": null.
    assert admin.put(f"/users/{user_id}", json={"password": None, "title": "T"}).status_code == 200


def test_put_cannot_remove_a_required_field(admin: httpx.Client, make_user: MakeUser) -> None:
    user_id, _name, _pw, _client = make_user()
    before = admin.get(f"/users/{user_id}").json()["data"]
    for name in ("firstName", "email", "licenseType"):
        assert_error(admin.put(f"/users/{user_id}", json={name: None}), 400, name)
    assert_error(admin.put(f"/users/{user_id}", json={"firstName": ""}), 400, "firstName")
    assert admin.get(f"/users/{user_id}").json()["data"] == before


def test_put_back_a_whole_get_object(admin: httpx.Client, make_user: MakeUser) -> None:
    user_id, _name, _pw, client = make_user()
    data = admin.get(f"/users/{user_id}").json()["data"]
    assert {"id", "type", "active", "avatarUrl"} <= set(data)
    data.update({"title": "Whole", "location": "Paris"})
    response = admin.put(f"/users/{user_id}", json=data)
    assert response.status_code == 200, response.text
    assert response.json()["meta"]["status"] == "OK"
    after = admin.get(f"/users/{user_id}").json()["data"]
    assert after == data
    # Read-only members are ignored, not applied: "active": false does not deactivate.
    mine = client.get("/users/current").json()["data"]
    mine.update({"active": False, "id": 1, "phone": "42"})
    assert client.put(f"/users/{user_id}", json=mine).status_code == 200
    after = admin.get(f"/users/{user_id}").json()["data"]
    assert (after["active"], after["phone"]) == (True, "42")
    assert admin.get("/users/1").json()["data"]["phone"] != "42"


def test_put_updates_and_ignores_read_only_members(
    admin: httpx.Client, make_user: MakeUser
) -> None:
    user_id, _name, _pw, _client = make_user()
    data = admin.get(f"/users/{user_id}").json()["data"]
    data.update({"title": "Lead", "location": "Berlin"})
    response = admin.put(f"/users/{user_id}", json=data)
    assert response.status_code == 200
    assert response.json()["meta"]["status"] == "OK"
    after = admin.get(f"/users/{user_id}").json()["data"]
    assert (after["title"], after["location"], after["active"]) == ("Lead", "Berlin", True)
    refused = admin.put(f"/users/{user_id}", json={"password": "new"})
    assert refused.status_code == 400
    assert "password" in refused.json()["meta"]["message"]


def test_renaming_a_user_changes_their_login(
    system: System, admin: httpx.Client, make_user: MakeUser
) -> None:
    user_id, _old, password, client = make_user()
    assert client.get("/users/current").status_code == 200
    new_name = unique("renamed")
    assert admin.put(f"/users/{user_id}", json={"username": new_name}).status_code == 200
    renamed = httpx.get(f"{system.url}/rest/v1/users/current", auth=(new_name, password))
    assert renamed.status_code == 200
    assert renamed.json()["data"]["id"] == user_id
    assert eventually(lambda: client.get("/users/current").status_code == 401)


def test_duplicate_usernames_already_exist(admin: httpx.Client, make_user: MakeUser) -> None:
    _id, username, _pw, _client = make_user()
    assert_error(admin.post("/users", json=user_body(username=username)), 400, "already exists")
    assert_error(
        admin.post("/users", json=user_body(username=username.upper())), 400, "already exists"
    )
    other, _n, _p, _c = make_user()
    assert_error(admin.put(f"/users/{other}", json={"username": username}), 400, "already exists")


def test_duplicate_username(admin: httpx.Client, make_user: MakeUser) -> None:
    _id, username, _pw, _client = make_user()
    again = admin.post("/users", json=user_body(username=username.upper()))
    assert again.status_code == 400
    assert "already exists" in again.json()["meta"]["message"]


def test_deactivation_stops_basic_auth_and_activation_restores_it(
    admin: httpx.Client,
    make_user: MakeUser,
) -> None:
    user_id, _name, _pw, client = make_user()
    assert client.get("/users/current").status_code == 200  # now cached by the gateway
    off = admin.put(f"/users/{user_id}/active", json={"active": False})
    assert off.status_code == 200
    assert off.json()["meta"]["status"] == "OK"
    assert eventually(lambda: client.get("/users/current").status_code == 401)
    assert_error(client.get("/users/current"), 401, "inactive")
    on = admin.put(f"/users/{user_id}/active", json={"active": True})
    assert on.status_code == 200
    assert on.json()["meta"]["status"] == "OK"
    assert eventually(lambda: client.get("/users/current").status_code == 200)
    assert client.get("/users/current").json()["data"]["active"] is True


def test_activation_rules(admin: httpx.Client) -> None:
    me = admin.get("/users/current").json()["data"]["id"]
    assert_error(admin.put(f"/users/{me}/active", json={"active": False}), 400, "yourself")
    assert_error(admin.put("/users/987654321/active", json={"active": True}), 404, "987654321")
    assert_error(admin.put("/users/987654321", json={"title": "x"}), 404, "987654321")


def test_what_a_normal_user_may_do(admin: httpx.Client, make_user: MakeUser) -> None:
    me, my_name, _pw, client = make_user()
    other, _n, _p, _c = make_user()
    for response in (
        client.get("/users"),
        client.get("/users", params={"username": my_name}),
        client.get("/usergroups"),
        client.post("/users", json=user_body()),
        client.put(f"/users/{other}/active", json={"active": False}),
        client.put(f"/users/{me}/active", json={"active": True}),
        client.put(f"/users/{other}", json={"title": "Not yours"}),
    ):
        assert_error(response, 401)
    current = client.get("/users/current").json()["data"]
    assert (current["id"], current["username"]) == (me, my_name)
    assert client.get(f"/users/{me}").json()["data"]["username"] == my_name
    assert_error(client.get(f"/users/{other}"), 401, str(other))
    assert admin.get(f"/users/{other}").json()["data"]["title"] == ""

    group = admin.post("/usergroups", json={"name": unique("pair")}).json()["meta"]["id"]
    for user in (me, other):
        assert admin.post(f"/usergroups/{group}/users", json={"user": user}).status_code == 201
    assert client.get(f"/users/{other}").json()["data"]["id"] == other
    assert admin.delete(f"/usergroups/{group}/users/{other}").status_code == 204
    assert_error(client.get(f"/users/{other}"), 401)


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


def test_anonymous_callers_get_401(anonymous: httpx.Client) -> None:
    for response in (
        anonymous.get("/users"),
        anonymous.get("/users/current"),
        anonymous.get("/users/1"),
        anonymous.post("/users", json=user_body()),
    ):
        assert_error(response, 401, "Authentication")
