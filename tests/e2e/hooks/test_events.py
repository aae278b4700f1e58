"""(labs) ``/events``, the change feed: every change the caller may read, in order,
after a cursor; a long poll that answers when the next change comes; clear refusals.

As for ``/activities``, the gateway waits until the feed has caught up with every write
it has seen, so a read right after a write already shows it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from tests.e2e.api import MakeUser, assert_error, create_item, grant, new_project
from tests.e2e.topology import System


def _read(client: httpx.Client, **params: Any) -> tuple[list[dict[str, Any]], int]:
    response = client.get("/events", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["status"] == "OK"
    return body["data"], int(body["meta"]["next"])


def _head(client: httpx.Client) -> int:
    """The feed's head now: the cursor after everything so far."""
    return _read(client, after=0, objectType="INTEGRATION")[1]


def test_a_change_is_there_at_once_with_what_changed(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    start = _head(labs)
    item = create_item(admin, project, "Fed")
    patched = admin.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "Fed again"}]
    )
    assert patched.status_code == 200, patched.text
    changes, cursor = _read(labs, after=start, project=project["id"])
    assert [(c["type"], c["objectId"]) for c in changes] == [
        ("items.item.created", item),
        ("items.item.updated", item),
    ]
    created, updated = changes
    assert (created["eventType"], created["objectType"], created["project"]) == (
        "CREATE",
        "ITEM",
        project["id"],
    )
    assert created["itemType"] == project["types"]["REQ"]["id"]
    assert updated["version"] == created["version"] + 1
    assert created["cursor"] < updated["cursor"] == cursor
    assert created["actor"] == admin.get("/users/current").json()["data"]["id"]
    assert created["time"].endswith("+0000")
    assert "Fed" in created["details"]
    # Read on from the cursor: nothing is repeated.
    assert _read(labs, after=cursor, project=project["id"]) == ([], cursor)


def test_paging_by_cursor_reads_each_change_once_in_order(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    start = _head(labs)
    made = [create_item(admin, project, f"Paged {n}") for n in range(7)]
    seen: list[int] = []
    cursor = start
    for _ in range(10):
        page, cursor = _read(labs, after=cursor, limit=3, project=project["id"])
        if not page:
            break
        assert len(page) <= 3
        seen += [c["objectId"] for c in page]
    assert seen == made


def test_a_reader_sees_only_the_projects_they_may_read(
    system: System, labs: httpx.Client, admin: httpx.Client, make_user: MakeUser
) -> None:
    mine, theirs = new_project(admin), new_project(admin)
    user, name, password, _ = make_user()
    grant(admin, mine, "READ_ONLY", user=user)
    start = _head(labs)
    admin.put(f"/projects/{mine}", json={"fields": {"name": "Mine renamed"}})
    admin.put(f"/projects/{theirs}", json={"fields": {"name": "Theirs renamed"}})
    with system.client((name, password), version="labs") as reader:
        changes, _ = _read(reader, after=start)
    assert {c.get("project") for c in changes} == {mine}
    everything, _ = _read(labs, after=start, objectType="PROJECT")
    assert {c["project"] for c in everything} == {mine, theirs}
    # Nor the organisation's changes (a user made) to one who is no administrator.
    make_user()
    with system.client((name, password), version="labs") as reader:
        assert _read(reader, after=start, objectType="USER")[0] == []
    assert _read(labs, after=start, objectType="USER")[0]


def test_a_long_poll_answers_when_the_next_change_comes(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    cursor = _head(labs)
    answered: dict[str, Any] = {}

    def poll() -> None:
        changes, _ = _read(labs, after=cursor, project=project["id"], wait=20)
        answered["changes"], answered["at"] = changes, time.monotonic()

    waiting = threading.Thread(target=poll)
    waiting.start()
    time.sleep(1.0)
    assert waiting.is_alive()
    item = create_item(admin, project, "Awaited")
    written = time.monotonic()
    waiting.join(10)
    assert [c["objectId"] for c in answered["changes"]] == [item]
    # The change travels by event to the feed; the poll answers within a second of it.
    assert answered["at"] - written < 1.0


def test_bad_parameters_are_refused_with_what_is_allowed(labs: httpx.Client) -> None:
    assert_error(labs.get("/events", params={"wait": 31}), 400, "wait", "0 to 30")
    assert_error(labs.get("/events", params={"wait": "soon"}), 400, "wait")
    assert_error(labs.get("/events", params={"limit": 0}), 400, "limit")
    assert_error(labs.get("/events", params={"after": -1}), 400, "after")
    assert_error(labs.get("/events", params={"objectType": "PLANET"}), 400, "objectType")


def test_the_feed_is_labs_only(admin: httpx.Client) -> None:
    assert admin.get("/events").status_code == 404
