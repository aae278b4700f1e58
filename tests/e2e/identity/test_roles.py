"""``/rest/labs/users/{id}/roles``: organisation administrators give and take USER_ADMIN."""

from __future__ import annotations

import httpx

from tests.e2e.api import MakeUser, assert_error, eventually, user_body
from tests.e2e.topology import System


def test_admin_gives_and_takes_the_user_admin_role(
    system: System, labs: httpx.Client, admin: httpx.Client, make_user: MakeUser
) -> None:
    user_id, username, password, client = make_user()
    assert labs.get(f"/users/{user_id}/roles").json()["data"] == {
        "user": user_id,
        "roles": [],
        "type": "userroles",
    }
    # Not a user administrator yet: creating a user is refused (and cached as such).
    assert_error(client.post("/users", json=user_body()), 401, "administrators")

    given = labs.put(f"/users/{user_id}/roles", json={"roles": ["user_admin"]})
    assert given.status_code == 200, given.text
    assert given.json()["data"]["roles"] == ["USER_ADMIN"]
    # The change reaches the gateway's principal cache by event.
    assert eventually(lambda: client.post("/users", json=user_body()).status_code == 201)
    with system.client((username, password), version="labs") as own:
        assert own.get(f"/users/{user_id}/roles").json()["data"]["roles"] == ["USER_ADMIN"]

    taken = labs.put(f"/users/{user_id}/roles", json={"roles": []})
    assert taken.json()["data"]["roles"] == []
    assert eventually(lambda: client.post("/users", json=user_body()).status_code == 401)
    feed = labs.get("/activities/organization", params={"objectType": "USER"}).json()["data"]
    assert f"user {username} updated" in [a["details"] for a in feed]


def test_only_organization_admins_change_roles(
    system: System, labs: httpx.Client, make_user: MakeUser
) -> None:
    user_id, username, password, _client = make_user()
    other_id, *_ = make_user()
    assert labs.put(f"/users/{user_id}/roles", json={"roles": ["USER_ADMIN"]}).status_code == 200
    with system.client((username, password), version="labs") as user_admin:
        # A user administrator sees roles but cannot give them, not even to themself.
        assert user_admin.get(f"/users/{other_id}/roles").status_code == 200
        refused = user_admin.put(f"/users/{other_id}/roles", json={"roles": ["USER_ADMIN"]})
        assert_error(refused, 401, "organization administrators")
    _id, name, pw, _c = make_user()
    with system.client((name, pw), version="labs") as plain:
        assert_error(plain.get(f"/users/{other_id}/roles"), 401, "roles")


def test_roles_are_checked(labs: httpx.Client, make_user: MakeUser) -> None:
    user_id, *_ = make_user()
    assert_error(
        labs.put(f"/users/{user_id}/roles", json={"roles": ["SUPERUSER"]}), 400, "SUPERUSER"
    )
    assert_error(
        labs.put(f"/users/{user_id}/roles", json={"roles": ["ORGANIZATION_ADMIN"]}),
        400,
        "cannot be given",
    )
    admin_id = labs.get("/users/current").json()["data"]["id"]
    assert labs.get(f"/users/{admin_id}/roles").json()["data"]["roles"] == ["ORGANIZATION_ADMIN"]
    assert_error(labs.put(f"/users/{admin_id}/roles", json={"roles": []}), 400, "cannot be taken")
    both = labs.put(f"/users/{admin_id}/roles", json={"roles": ["ORGANIZATION_ADMIN"]})
    assert both.status_code == 200
    assert_error(labs.put(f"/users/{user_id}/roles", json={"role": []}), 400, "role")
    assert_error(labs.get("/users/999999999/roles"), 404, "999999999")


def test_roles_are_labs_only(admin: httpx.Client) -> None:
    admin_id = admin.get("/users/current").json()["data"]["id"]
    assert_error(admin.get(f"/users/{admin_id}/roles"), 404, "/rest/labs")
