"""``/rest/labs/activities/organization``: identity's changes, for administrators only.

Users, groups, permissions, credentials and settings are the organisation's history:
they are in this feed and in no project's.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import MakeUser, assert_error, new_project, unique


def _org_feed(labs: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    response = labs.get("/activities/organization", params={"maxResults": 50, **params})
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


def test_users_and_groups_are_in_the_organization_feed(
    admin: httpx.Client, labs: httpx.Client, make_user: MakeUser
) -> None:
    project = new_project(admin)
    user_id, username, _pw, _client = make_user()
    group_name = unique("FeedGroup")
    group = admin.post("/usergroups", json={"name": group_name, "project": project})
    assert group.status_code == 201
    added = admin.post(f"/usergroups/{group.json()['meta']['id']}/users", json={"user": user_id})
    assert added.status_code == 201
    details = [(a["eventType"], a["details"]) for a in _org_feed(labs, objectType="USER")]
    # Newest first.
    assert details[:3] == [
        ("UPDATE", f"user {user_id} added to user group {group_name}"),
        ("CREATE", f"user group {group_name} created"),
        ("CREATE", f"user {username} created"),
    ]
    # ... and in no project's feed, not even the group's project.
    feed = admin.get("/activities", params={"project": project, "maxResults": 50}).json()
    assert [a["objectType"] for a in feed["data"]] == ["PROJECT"]


def test_credentials_are_in_the_organization_feed(
    system: Any, labs: httpx.Client, make_user: MakeUser
) -> None:
    _uid, username, password, _client = make_user()
    name = unique("feed-client-")
    created = httpx.post(
        f"{system.url}/rest/labs/users/current/apicredentials",
        json={"name": name},
        auth=(username, password),
    )
    assert created.status_code == 201, created.text
    revoked = httpx.delete(
        f"{system.url}/rest/labs/users/current/apicredentials/{created.json()['meta']['id']}",
        auth=(username, password),
    )
    assert revoked.status_code == 204, revoked.text
    details = [(a["eventType"], a["details"]) for a in _org_feed(labs)]
    assert ("DELETE", f"API credentials {name} revoked") in details
    assert ("CREATE", f"API credentials {name} created") in details


def test_only_organization_admins_read_it(
    system: Any, labs: httpx.Client, make_user: MakeUser
) -> None:
    user_id, username, password, _client = make_user()
    with system.client((username, password), version="labs") as user:
        assert_error(user.get("/activities/organization"), 401, "organization administrators")
        # A user administrator manages users but does not read the organisation's history.
        given = labs.put(f"/users/{user_id}/roles", json={"roles": ["USER_ADMIN"]})
        assert given.status_code == 200, given.text
        assert_error(user.get("/activities/organization"), 401, "organization administrators")
        # Nor one of its activities by id.
        activity = _org_feed(labs)[0]
        assert_error(user.get(f"/activities/{activity['id']}"), 401, "organization")
    assert labs.get(f"/activities/{activity['id']}").status_code == 200


def test_it_is_an_extension_under_labs_only(admin: httpx.Client) -> None:
    assert_error(admin.get("/activities/organization"), 404, "/rest/labs")
