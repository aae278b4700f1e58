"""``/activities``: every change shows at once, and the filters narrow it down.

No polling here: the gateway waits until the feed has caught up with every write it
has seen, so a read right after a write must already show it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.e2e.api import (
    MakeUser,
    Query,
    assert_error,
    create_item,
    grant,
    new_project,
    project_key,
    total_of,
    unique,
)


def _feed(admin: httpx.Client, params: Query) -> list[dict[str, Any]]:
    response = admin.get("/activities", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["pageInfo"]["resultCount"] == len(body["data"])
    data: list[dict[str, Any]] = body["data"]
    return data


def _shift(date: str, milliseconds: int) -> str:
    moved = datetime.strptime(date, "%Y-%m-%dT%H:%M:%S.%f%z") + timedelta(milliseconds=milliseconds)
    return moved.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moved.microsecond // 1000:03d}+0000"


def test_a_new_project_shows_at_once(admin: httpx.Client) -> None:
    admin_id = admin.get("/users/current").json()["data"]["id"]
    project = new_project(admin)
    feed = _feed(admin, {"project": project, "objectType": "PROJECT"})
    assert len(feed) == 1
    activity = feed[0]
    assert (activity["eventType"], activity["objectType"], activity["action"]) == (
        "CREATE",
        "PROJECT",
        "Created",
    )
    assert activity["user"] == admin_id
    assert activity["type"] == "activities"
    assert activity["date"].endswith("+0000")
    assert {"id", "details", "userComment"} <= set(activity)


def test_changes_show_in_the_feed_at_once(admin: httpx.Client, make_user: MakeUser) -> None:
    before = (datetime.now(UTC) - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S.000+0000")
    pid = new_project(admin, projectKey=project_key("ACT"), fields={"name": "Feed"})
    # No polling: the gateway waits for the feed to catch up with the write.
    feed = admin.get("/activities", params={"project": pid, "objectType": "PROJECT"}).json()
    assert [(a["eventType"], a["action"]) for a in feed["data"]] == [("CREATE", "Created")]
    activity = feed["data"][0]
    assert activity["user"] == admin.get("/users/current").json()["data"]["id"]

    admin.put(f"/projects/{pid}", json={"fields": {"name": "Feed 2"}})
    tag = admin.post("/tags", json={"name": unique("ft"), "project": pid})
    assert tag.status_code == 201, tag.text
    assert admin.delete(f"/tags/{tag.json()['meta']['id']}").status_code == 204
    updates = admin.get(
        "/activities", params={"project": pid, "eventType": "UPDATE", "objectType": "PROJECT"}
    ).json()
    assert len(updates["data"]) == 1
    deletes = admin.get("/activities", params={"project": pid, "deleteEvents": "true"}).json()
    assert deletes["data"]
    assert all(a["eventType"] == "DELETE" for a in deletes["data"])
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
    assert future["data"] == []
    assert future["meta"]["pageInfo"]["totalResults"] == 0

    one = admin.get(f"/activities/{activity['id']}", params={"include": "data.user"}).json()
    assert one["data"]["id"] == activity["id"]
    assert one["linked"]["users"][str(activity["user"])]["username"] == "admin"


def test_event_and_object_type_filters_repeat(admin: httpx.Client) -> None:
    project = new_project(admin)
    assert (
        admin.put(f"/projects/{project}", json={"fields": {"name": "Renamed"}}).status_code == 200
    )
    both = _feed(admin, {"project": project, "objectType": "PROJECT"})
    assert [a["eventType"] for a in both] == ["UPDATE", "CREATE"]
    assert both[0]["id"] > both[1]["id"]
    created = _feed(admin, {"project": project, "objectType": "PROJECT", "eventType": "CREATE"})
    assert [a["id"] for a in created] == [both[1]["id"]]
    repeated = _feed(
        admin,
        [
            ("project", project),
            ("objectType", "PROJECT"),
            ("eventType", "CREATE"),
            ("eventType", "UPDATE"),
        ],
    )
    assert [a["id"] for a in repeated] == [a["id"] for a in both]
    kinds = _feed(
        admin,
        [
            ("project", project),
            ("objectType", "PROJECT"),
            ("objectType", "USER"),
            ("maxResults", 50),
        ],
    )
    assert {a["objectType"] for a in kinds} <= {"PROJECT", "USER"}
    assert {a["id"] for a in both} <= {a["id"] for a in kinds}
    assert _feed(admin, {"project": project, "objectType": "ITEM"}) == []


def test_a_feed_holds_only_its_own_project(admin: httpx.Client) -> None:
    mine = new_project(admin)
    theirs = new_project(admin)
    tag_name = unique("TheirTag")
    assert admin.post("/tags", json={"name": tag_name, "project": theirs}).status_code == 201
    assert len(_feed(admin, {"project": mine, "objectType": "PROJECT"})) == 1
    their_feed = _feed(admin, {"project": theirs, "maxResults": 50})
    assert any(tag_name in a["details"] for a in their_feed)
    my_feed = _feed(admin, {"project": mine, "maxResults": 50})
    assert not any(tag_name in a["details"] for a in my_feed)


def test_date_takes_one_value_or_a_range(admin: httpx.Client) -> None:
    project = new_project(admin)
    (activity,) = _feed(admin, {"project": project, "objectType": "PROJECT"})
    date = activity["date"]

    def ids(*dates: str) -> list[int]:
        params: Query = [
            ("project", project),
            ("objectType", "PROJECT"),
            *[("date", d) for d in dates],
        ]
        return [a["id"] for a in _feed(admin, params)]

    assert ids(date) == [activity["id"]]  # at or after
    assert ids(_shift(date, 1)) == []
    assert ids(date, date) == [activity["id"]]  # the range includes both ends
    assert ids(_shift(date, -60_000), _shift(date, 60_000)) == [activity["id"]]
    assert ids(_shift(date, -60_000), _shift(date, -1)) == []
    assert ids("2000-01-01T00:00:00+0000") == [activity["id"]]  # without milliseconds
    # Offsets are converted to UTC: the same instant written in +0200.
    utc = datetime.strptime(date, "%Y-%m-%dT%H:%M:%S.%f%z")
    local = (utc + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S.") + date[20:23] + "+0200"
    assert ids(local, local) == [activity["id"]]
    empty = admin.get(
        "/activities", params={"project": project, "date": _shift(date, 3_600_000)}
    ).json()
    assert empty["data"] == []
    assert empty["meta"]["pageInfo"]["totalResults"] == 0


def test_delete_events_only(admin: httpx.Client) -> None:
    project = new_project(admin)
    name = unique("Doomed")
    tag = admin.post("/tags", json={"name": name, "project": project}).json()["meta"]["id"]
    assert admin.delete(f"/tags/{tag}").status_code == 204
    deletes = _feed(admin, {"project": project, "deleteEvents": "true", "maxResults": 50})
    assert deletes
    assert all(a["eventType"] == "DELETE" for a in deletes)
    assert deletes[0]["details"] == f"tag {name} deleted"
    assert deletes[0]["action"] == "Deleted"
    everything = _feed(admin, {"project": project, "deleteEvents": "false", "maxResults": 50})
    assert {"CREATE", "DELETE"} <= {a["eventType"] for a in everything}


def test_get_one_activity_and_include_its_user(admin: httpx.Client) -> None:
    admin_id = admin.get("/users/current").json()["data"]["id"]
    project = new_project(admin)
    (activity,) = _feed(admin, {"project": project, "objectType": "PROJECT"})
    one = admin.get(f"/activities/{activity['id']}")
    assert one.status_code == 200
    assert one.json()["data"] == activity
    assert one.json()["links"]["data.user"]["href"].endswith("/rest/v1/users/{data.user}")
    included = admin.get(f"/activities/{activity['id']}", params={"include": "data.user"}).json()
    assert included["linked"]["users"][str(admin_id)]["username"] == "admin"
    listed = admin.get(
        "/activities", params={"project": project, "objectType": "PROJECT", "include": "data.user"}
    ).json()
    assert list(listed["linked"]["users"]) == [str(admin_id)]
    assert_error(admin.get("/activities/987654321"), 404, "987654321")


def test_pages_of_the_feed(admin: httpx.Client) -> None:
    project = new_project(admin)
    for name in ("one", "two", "three"):
        assert admin.put(f"/projects/{project}", json={"fields": {"name": name}}).status_code == 200
    params: dict[str, str | int] = {"project": project, "objectType": "PROJECT", "maxResults": 3}
    first = admin.get("/activities", params=params).json()
    assert first["meta"]["pageInfo"] == {"startIndex": 0, "resultCount": 3, "totalResults": 4}
    rest = admin.get("/activities", params={**params, "startAt": 3}).json()
    assert rest["meta"]["pageInfo"] == {"startIndex": 3, "resultCount": 1, "totalResults": 4}
    assert [a["eventType"] for a in first["data"] + rest["data"]] == [
        "UPDATE",
        "UPDATE",
        "UPDATE",
        "CREATE",
    ]


def test_bad_activity_queries(admin: httpx.Client) -> None:
    assert_error(admin.get("/activities"), 400, "project", "required")
    assert_error(admin.get("/activities", params={"project": "one"}), 400, "project")
    assert_error(admin.get("/activities", params={"project": 1, "date": "yesterday"}), 400, "date")
    assert_error(admin.get("/activities", params={"project": 1, "date": "2024-01-31"}), 400, "date")
    three: Query = [("project", 1)] + [("date", "2024-01-01T00:00:00.000+0000")] * 3
    assert_error(admin.get("/activities", params=three), 400, "date")
    reversed_range: Query = [
        ("project", 1),
        ("date", "2024-02-01T00:00:00.000+0000"),
        ("date", "2024-01-01T00:00:00.000+0000"),
    ]
    assert_error(admin.get("/activities", params=reversed_range), 400, "date")
    assert_error(
        admin.get("/activities", params={"project": 1, "eventType": "EXPLODE"}), 400, "eventType"
    )
    assert_error(
        admin.get("/activities", params={"project": 1, "objectType": "GIZMO"}), 400, "objectType"
    )
    assert_error(
        admin.get("/activities", params={"project": 1, "deleteEvents": "maybe"}),
        400,
        "deleteEvents",
    )
    assert_error(admin.get("/activities", params={"project": 1, "itemType": "x"}), 400, "itemType")
    assert_error(
        admin.get("/activities", params={"project": 1, "include": "item"}), 400, "include", "'item'"
    )


def test_normal_users_read_the_feed_and_anonymous_callers_do_not(
    admin: httpx.Client,
    anonymous: httpx.Client,
    make_user: MakeUser,
) -> None:
    project = new_project(admin)
    user_id, _name, _pw, client = make_user()
    assert_error(client.get("/activities", params={"project": project}), 401, "no access")
    grant(admin, project, "READ_ONLY", user=user_id)
    feed = client.get("/activities", params={"project": project, "objectType": "PROJECT"})
    assert feed.status_code == 200
    assert len(feed.json()["data"]) == 1
    assert_error(anonymous.get("/activities", params={"project": project}), 401)
    assert_error(anonymous.get("/activities/1"), 401)


def test_an_items_activities(admin: httpx.Client, project: dict[str, Any]) -> None:
    item = create_item(admin, project, "Watched")
    other = create_item(admin, project, "Elsewhere")
    renamed = admin.patch(
        f"/items/{item}",
        json=[{"op": "replace", "path": "/fields/name", "value": "Watched, renamed"}],
    )
    assert renamed.status_code == 200, renamed.text
    response = admin.get(f"/items/{item}/activities")
    assert response.status_code == 200, response.text
    feed = response.json()["data"]
    assert {a["item"] for a in feed} == {item}
    assert other != item
    assert [a["eventType"] for a in feed] == ["UPDATE", "CREATE"]
    assert total_of(response) == 2
    assert_error(admin.get("/items/9000000000000/activities"), 404)


def test_activities_about_an_item_carry_its_item_type(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    item = create_item(admin, project, "Typed")
    item_type = admin.get(f"/items/{item}").json()["data"]["itemType"]
    feed = _feed(admin, {"project": project["id"], "maxResults": 50})
    about_item = [a for a in feed if a.get("item") == item and a["objectType"] == "ITEM"]
    assert about_item
    assert {a["itemType"] for a in about_item} == {item_type}
    assert admin.get(f"/activities/{about_item[0]['id']}").json()["data"]["itemType"] == item_type
    # An activity about no abstract item (the project) has none.
    about_project = [a for a in feed if a["objectType"] == "PROJECT"]
    assert about_project
    assert all("itemType" not in a for a in about_project)
