"""Places in the tree over HTTP: tree order, PUT /items/treelocation, moves between projects."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import create_item, new_project, project_key, unique


def _tree(admin: httpx.Client, project: dict[str, Any]) -> list[tuple[str, str, int]]:
    items = admin.get("/items", params={"project": project["id"], "maxResults": 50}).json()["data"]
    return [
        (i["fields"]["name"], i["location"]["sequence"], i["location"]["sortOrder"]) for i in items
    ]


def test_tree_order_sequence_and_moves(admin: httpx.Client, project: dict[str, Any]) -> None:
    a = create_item(admin, project, "A")
    a1 = create_item(admin, project, "A1", parent=a)
    b = create_item(admin, project, "B")
    a2 = create_item(
        admin, project, "A2", parent=a
    )  # goes to the bottom of A, before B in the tree
    assert _tree(admin, project) == [
        ("A", "1", 0),
        ("A1", "1.1", 0),
        ("A2", "1.2", 1),
        ("B", "2", 1),
    ]
    orders = [
        i["location"]["globalSortOrder"]
        for i in admin.get("/items", params={"project": project["id"]}).json()["data"]
    ]
    assert orders == sorted(orders)
    assert len(set(orders)) == 4
    roots = admin.get("/items", params={"project": project["id"], "rootOnly": "true"}).json()
    assert [i["id"] for i in roots["data"]] == [a, b]
    children = admin.get(f"/items/{a}/children").json()
    assert [i["id"] for i in children["data"]] == [a1, a2]
    assert admin.get(f"/items/{a1}/parent").json()["data"]["id"] == a
    assert admin.get(f"/items/{a}/parent").status_code == 400

    moved = admin.patch(
        f"/items/{a1}", json=[{"op": "replace", "path": "/location/parent", "value": {"item": b}}]
    )
    assert moved.status_code == 200
    assert moved.json()["meta"]["status"] == "OK"
    assert _tree(admin, project) == [
        ("A", "1", 0),
        ("A2", "1.1", 0),
        ("B", "2", 1),
        ("A1", "2.1", 0),
    ]
    assert admin.get(f"/items/{a1}/location").json()["data"]["parent"] == {"item": b}

    assert admin.delete(f"/items/{a}").status_code == 204
    assert _tree(admin, project) == [("B", "1", 0), ("A1", "1.1", 0)]
    assert admin.get(f"/items/{a2}").status_code == 404, "a deleted item's children go with it"
    cycle = admin.patch(
        f"/items/{b}", json=[{"op": "replace", "path": "/location/parent", "value": {"item": a1}}]
    )
    assert cycle.status_code == 400


def test_tree_location_places_an_item_after_a_peer(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    a = create_item(admin, project, "A")
    a1 = create_item(admin, project, "A1", parent=a)
    a2 = create_item(admin, project, "A2", parent=a)
    a21 = create_item(admin, project, "A21", parent=a2)
    b = create_item(admin, project, "B")

    def place(item: int, parent: dict[str, int], peer: int | None = None) -> httpx.Response:
        body: dict[str, Any] = {"item": item, "parent": parent}
        if peer is not None:
            body["peer"] = peer
        return admin.put("/items/treelocation", json=body)

    # First among its siblings (no peer): A2 and its child move ahead of A1.
    assert place(a2, {"item": a}).status_code == 200
    assert _tree(admin, project) == [
        ("A", "1", 0),
        ("A2", "1.1", 0),
        ("A21", "1.1.1", 0),
        ("A1", "1.2", 1),
        ("B", "2", 1),
    ]
    # To another parent, right after a peer there; the camel-case path works too.
    moved = admin.put("/items/treeLocation", json={"item": b, "parent": {"item": a}, "peer": a2})
    assert moved.status_code == 200, moved.text
    assert _tree(admin, project) == [
        ("A", "1", 0),
        ("A2", "1.1", 0),
        ("A21", "1.1.1", 0),
        ("B", "1.2", 1),
        ("A1", "1.3", 2),
    ]
    # Back to the project root, after A.
    assert place(a21, {"project": project["id"]}, peer=a).status_code == 200
    assert _tree(admin, project) == [
        ("A", "1", 0),
        ("A2", "1.1", 0),
        ("B", "1.2", 1),
        ("A1", "1.3", 2),
        ("A21", "2", 1),
    ]
    orders = [
        i["location"]["globalSortOrder"]
        for i in admin.get("/items", params={"project": project["id"]}).json()["data"]
    ]
    assert orders == sorted(orders)
    assert len(set(orders)) == 5
    assert admin.get(f"/items/{b}").json()["data"]["location"]["parent"] == {"item": a}

    def refused(response: httpx.Response, words: str) -> None:
        assert response.status_code == 400, response.text
        assert words in response.json()["meta"]["message"]

    refused(place(a, {"item": a1}), "under itself")
    refused(place(a1, {"item": a}, peer=a21), f"peer: item {a21} is not a child of item {a}")
    refused(place(a1, {"item": a}, peer=a1), "another item")
    refused(admin.put("/items/treelocation", json={"item": a1, "parent": {}}), "exactly one")
    refused(admin.put("/items/treelocation", json={"item": a1}), "parent")
    other = admin.post("/projects", json={"projectKey": project_key("TL"), "fields": {"name": "x"}})
    refused(place(a1, {"project": other.json()["meta"]["id"]}), "PUT /items/{id}/location")
    assert place(999_999_999, {"project": project["id"]}).status_code == 404


def test_move_to_another_project(admin: httpx.Client, project: dict[str, Any]) -> None:
    top = create_item(admin, project, "Moving")
    child = create_item(admin, project, "Comes along", parent=top)
    stays = create_item(admin, project, "Stays")
    tag = admin.post("/tags", json={"name": unique("t"), "project": project["id"]}).json()["meta"][
        "id"
    ]
    admin.post(f"/items/{child}/tags", json={"tag": tag})
    key = project_key("MV")
    target = new_project(admin, key)
    existing = admin.post(
        "/items",
        json={
            "project": target,
            "itemType": project["types"]["REQ"]["id"],
            "fields": {"name": "Already there"},
        },
    )
    assert existing.status_code == 201
    response = admin.put(f"/items/{top}/location", json={"parent": {"project": target}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["status"] == "OK"
    assert body["data"]["workId"]
    assert sorted(body["data"]["movedItems"]) == sorted([top, child])
    moved = admin.get(f"/items/{top}").json()["data"]
    assert moved["project"] == target
    assert moved["location"]["parent"] == {"project": target}
    assert moved["location"]["sequence"] == "2"
    assert moved["documentKey"].startswith(f"{key}-REQ-")
    assert admin.get(f"/items/{child}").json()["data"]["location"]["sequence"] == "2.1"
    assert admin.get(f"/items/{child}/tags").json()["data"] == [], (
        "tags of the old project are dropped"
    )
    assert _tree(admin, project) == [("Stays", "1", 0)]
    assert admin.get(f"/items/{stays}").json()["data"]["project"] == project["id"]
    same = admin.put(f"/items/{stays}/location", json={"parent": {"project": project["id"]}})
    assert same.status_code == 400
    assert (
        admin.put(f"/items/{stays}/location", json={"parent": {"project": 987654}}).status_code
        == 400
    )
    assert admin.put(f"/items/{stays}/location", json={"parent": {"item": 1}}).status_code == 400
