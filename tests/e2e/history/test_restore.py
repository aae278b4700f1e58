"""``/activities/{id}/affecteditems`` and ``POST /activities/{id}/restore``: what an
activity affected, and bringing back what a deletion deleted (once)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from plumbline.common.dates import format_datetime, utcnow
from tests.e2e.api import Team, assert_error, create_item, ids_of, total_of
from tests.e2e.topology import System


def _relate(admin: httpx.Client, source: int, target: int) -> int:
    response = admin.post("/relationships", json={"fromItem": source, "toItem": target})
    assert response.status_code == 201, response.text
    return int(response.json()["meta"]["id"])


def _activity(admin: httpx.Client, project: int, item: int, event_type: str) -> dict[str, Any]:
    """The newest activity of ``item`` of that kind."""
    response = admin.get(
        "/activities",
        params={
            "project": project,
            "objectType": "ITEM",
            "eventType": event_type,
            "maxResults": 50,
        },
    )
    found = [a for a in response.json()["data"] if a["item"] == item]
    assert found, response.text
    activity: dict[str, Any] = found[0]
    return activity


def _item(admin: httpx.Client, item: int) -> dict[str, Any]:
    response = admin.get(f"/items/{item}")
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def _delete(admin: httpx.Client, project: int, item: int) -> int:
    assert admin.delete(f"/items/{item}").status_code == 204
    return int(_activity(admin, project, item, "DELETE")["id"])


def _assert_affected(admin: httpx.Client, activity: int, subtree: list[int]) -> None:
    """The items deletion ``activity`` affected: the subtree's top first, paged."""
    affected = admin.get(f"/activities/{activity}/affecteditems")
    assert ids_of(affected)[0] == subtree[0]
    assert sorted(ids_of(affected)) == sorted(subtree)
    assert total_of(affected) == 4
    assert all(i["type"] == "items" for i in affected.json()["data"])
    assert all(i["resources"]["self"]["allowed"] == [] for i in affected.json()["data"])
    paged = admin.get(
        f"/activities/{activity}/affecteditems", params={"startAt": 1, "maxResults": 2}
    )
    assert ids_of(paged) == ids_of(affected)[1:3]
    assert total_of(paged) == 4


def test_a_deleted_subtree_comes_back_with_its_relationships(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    pid = project["id"]
    first = create_item(admin, project, "First")
    doomed = create_item(admin, project, "Doomed")
    child = create_item(admin, project, "Child", parent=doomed)
    other_child = create_item(admin, project, "Other child", parent=doomed)
    grandchild = create_item(admin, project, "Grandchild", parent=other_child)
    last = create_item(admin, project, "Last")
    subtree = [doomed, child, other_child, grandchild]
    before = {i: _item(admin, i) for i in subtree}
    inside = _relate(admin, child, grandchild)
    outgoing = _relate(admin, grandchild, last)
    incoming = _relate(admin, first, doomed)
    # Deleted on its own earlier: the subtree's deletion did not take it along.
    gone_before = create_item(admin, project, "Gone before", parent=doomed)
    _delete(admin, pid, gone_before)

    activity = _delete(admin, pid, doomed)
    assert admin.get(f"/items/{grandchild}").status_code == 404
    assert ids_of(admin.get(f"/items/{first}/downstreamrelationships")) == []
    assert _item(admin, last)["location"]["sequence"] == "2"

    # What the deletion affected: the item, then the items deleted with it, as deleted.
    _assert_affected(admin, activity, subtree)

    restored = admin.post(f"/activities/{activity}/restore")
    # 201, as every POST of the contract answers; the location names what came back.
    assert restored.status_code == 201, restored.text
    meta = restored.json()["meta"]
    assert meta["status"] == "Created"
    assert meta["id"] == activity
    assert meta["location"].endswith(f"/activities/{activity}/affecteditems")
    assert restored.headers["Location"] == meta["location"]

    for item, was in before.items():
        now = _item(admin, item)
        assert now["documentKey"] == was["documentKey"]
        # Back where it was; the global order is renumbered.
        assert _place(now) == _place(was), item
    assert _item(admin, last)["location"]["sequence"] == "3"
    assert admin.get(f"/items/{gone_before}").status_code == 404
    assert ids_of(admin.get(f"/items/{doomed}/children")) == [child, other_child]
    orders = [_item(admin, i)["location"]["globalSortOrder"] for i in [first, *subtree, last]]
    assert orders == sorted(orders)
    assert ids_of(admin.get(f"/items/{first}/downstreamrelationships")) == [incoming]
    assert ids_of(admin.get(f"/items/{grandchild}/upstreamrelationships")) == [inside]
    assert ids_of(admin.get(f"/items/{grandchild}/downstreamrelationships")) == [outgoing]

    # The history goes on: a new version of each item, and the relationships again.
    history = admin.get(f"/items/{doomed}/versions").json()["data"]
    assert [v["versionNumber"] for v in history] == [1, 2]
    moment = format_datetime(utcnow())
    then = admin.get(f"/abstractitems/{first}/versionedrelationships", params={"timestamp": moment})
    assert [r["id"] for r in then.json()["data"]] == [incoming], then.text

    # The restore is in the feed: an update of each item it brought back.
    feed = admin.get(
        "/activities", params={"project": pid, "objectType": "ITEM", "eventType": "UPDATE"}
    ).json()["data"]
    restores = [a for a in feed if "restored" in a["details"]]
    assert sorted(a["item"] for a in restores) == sorted(subtree)

    assert_error(admin.post(f"/activities/{activity}/restore"), 400, "already been restored")
    assert ids_of(admin.get(f"/activities/{activity}/affecteditems"))[0] == doomed


def _place(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item["location"].items() if k != "globalSortOrder"}


def test_an_item_whose_parent_is_deleted_comes_back_at_the_root(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    pid = project["id"]
    folder = create_item(admin, project, "Folder")
    inner = create_item(admin, project, "Inner", parent=folder)
    sibling = create_item(admin, project, "Sibling", parent=folder)
    inner_deleted = _delete(admin, pid, inner)
    folder_deleted = _delete(admin, pid, folder)

    assert admin.post(f"/activities/{inner_deleted}/restore").status_code == 201
    back = _item(admin, inner)
    assert back["location"]["parent"] == {"project": pid}
    assert back["location"]["sequence"] == "1"

    # The folder comes back first at the root, where it was, with what its deletion took
    # (the sibling), not the inner item.
    assert admin.post(f"/activities/{folder_deleted}/restore").status_code == 201
    assert ids_of(admin.get(f"/items/{folder}/children")) == [sibling]
    assert _item(admin, sibling)["location"]["sequence"] == "1.1"
    assert ids_of(admin.get("/items", params={"project": pid, "rootOnly": "true"})) == [
        folder,
        inner,
    ]
    assert _item(admin, inner)["location"]["sequence"] == "2"


def test_only_deletions_of_items_are_restored(admin: httpx.Client, project: dict[str, Any]) -> None:
    pid = project["id"]
    item = create_item(admin, project, "Kept")
    created = _activity(admin, pid, item, "CREATE")["id"]
    assert_error(
        admin.post(f"/activities/{created}/restore"),
        400,
        f"Activity {created} is not the deletion of an item",
        "eventType CREATE, objectType ITEM",
    )
    tag = admin.post("/tags", json={"name": f"t{item}", "project": pid})
    assert admin.delete(f"/tags/{tag.json()['meta']['id']}").status_code == 204
    tag_deleted = admin.get(
        "/activities", params={"project": pid, "objectType": "TAG", "eventType": "DELETE"}
    ).json()["data"][0]["id"]
    assert_error(
        admin.post(f"/activities/{tag_deleted}/restore"), 400, "eventType DELETE, objectType TAG"
    )
    assert_error(admin.post("/activities/9000000000000/restore"), 404, "No activity")
    assert_error(admin.get("/activities/9000000000000/affecteditems"), 404, "No activity")


def test_affected_items_of_other_activities(admin: httpx.Client, project: dict[str, Any]) -> None:
    pid = project["id"]
    item = create_item(admin, project, "Changed")
    other = create_item(admin, project, "Related")
    renamed = admin.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "Renamed"}]
    )
    assert renamed.status_code == 200, renamed.text
    update = _activity(admin, pid, item, "UPDATE")["id"]
    response = admin.get(f"/activities/{update}/affecteditems")
    assert ids_of(response) == [item]
    assert total_of(response) == 1
    assert response.json()["data"][0]["fields"]["name"] == "Renamed"
    assert response.json()["data"][0]["resources"]["self"]["allowed"]

    comment = admin.post("/comments", json={"body": {"text": "Note"}, "location": {"item": item}})
    assert comment.status_code == 201, comment.text
    commented = admin.get("/activities", params={"project": pid, "objectType": "COMMENT"}).json()[
        "data"
    ][0]["id"]
    assert ids_of(admin.get(f"/activities/{commented}/affecteditems")) == [item]

    _relate(admin, item, other)
    related = admin.get(
        "/activities", params={"project": pid, "objectType": "RELATIONSHIP"}
    ).json()["data"][0]["id"]
    none = admin.get(f"/activities/{related}/affecteditems")
    assert ids_of(none) == []
    assert total_of(none) == 0


def test_access_to_affected_items_and_restores(
    admin: httpx.Client, team: Team, anonymous: httpx.Client
) -> None:
    project = team.project
    pid = project["id"]
    item = create_item(admin, project, "Guarded")
    activity = _delete(admin, pid, item)
    assert_error(team.clients["NONE"].get(f"/activities/{activity}/affecteditems"), 401)
    assert ids_of(team.clients["READ_ONLY"].get(f"/activities/{activity}/affecteditems")) == [item]
    for role in ("NONE", "READ_ONLY"):
        assert_error(team.clients[role].post(f"/activities/{activity}/restore"), 401)
    assert anonymous.post(f"/activities/{activity}/restore").status_code == 401
    assert anonymous.get(f"/activities/{activity}/affecteditems").status_code == 401
    # Refused restores leave the deletion restorable.
    assert team.clients["READ_WRITE"].post(f"/activities/{activity}/restore").status_code == 201
    assert _item(admin, item)["fields"]["name"] == "Guarded"


def test_two_restores_at_once_restore_once(
    admin: httpx.Client, system: System, project: dict[str, Any]
) -> None:
    pid = project["id"]
    parent = create_item(admin, project, "Raced")
    for n in range(5):
        create_item(admin, project, f"Child {n}", parent=parent)
    activity = _delete(admin, pid, parent)
    clients = [system.client(("admin", system.admin_password)) for _ in range(4)]
    try:
        with ThreadPoolExecutor(len(clients)) as pool:
            answers = list(pool.map(lambda c: c.post(f"/activities/{activity}/restore"), clients))
    finally:
        for client in clients:
            client.close()
    assert sorted(a.status_code for a in answers) == [201, 400, 400, 400], [a.text for a in answers]
    assert len(ids_of(admin.get(f"/items/{parent}/children"))) == 5
    feed = admin.get(
        "/activities", params={"project": pid, "objectType": "ITEM", "eventType": "UPDATE"}
    ).json()["data"]
    assert len([a for a in feed if "restored" in a["details"]]) == 6
