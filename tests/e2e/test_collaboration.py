"""Locks, tags, releases and comments over HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.harness import MakeUser, new_project, project_key, type_ids, unique


@pytest.fixture
def project(admin: httpx.Client) -> dict[str, Any]:
    key = project_key("CO")
    pid = new_project(admin, key)
    types = type_ids(admin)
    item = admin.post(
        "/items", json={"project": pid, "itemType": types["REQ"], "fields": {"name": "I"}}
    )
    return {"id": pid, "types": types, "item": item.json()["meta"]["id"]}


def test_lock_blocks_other_users(
    admin: httpx.Client, project: dict[str, Any], make_user: MakeUser
) -> None:
    item = project["item"]
    assert admin.get(f"/items/{item}/lock").json()["data"]["locked"] is False
    assert admin.put(f"/items/{item}/lock", json={"locked": True}).status_code == 200
    lock = admin.get(f"/items/{item}/lock", params={"include": "data.lockedBy"}).json()
    assert lock["data"]["locked"] is True and lock["data"]["lastLockedDate"].endswith("+0000")
    admin_id = admin.get("/users/current").json()["data"]["id"]
    assert lock["data"]["lockedBy"] == admin_id
    assert lock["linked"]["users"][str(admin_id)]["username"] == "admin"
    _id, _name, _pw, other = make_user()
    seen = other.get(f"/items/{item}").json()["data"]
    assert seen["resources"]["self"]["allowed"] == ["GET"]
    refused = other.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "x"}]
    )
    assert refused.status_code == 400 and "locked" in refused.json()["meta"]["message"]
    assert other.put(f"/items/{item}/lock", json={"locked": False}).status_code == 400
    assert other.delete(f"/items/{item}").status_code == 400
    assert (
        admin.patch(
            f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "mine"}]
        ).status_code
        == 200
    )
    assert admin.put(f"/items/{item}/lock", json={"locked": False}).status_code == 200
    assert (
        other.patch(
            f"/items/{item}", json=[{"op": "replace", "path": "/fields/name", "value": "x"}]
        ).status_code
        == 200
    )


def test_tags(admin: httpx.Client, project: dict[str, Any]) -> None:
    name = unique("urgent")
    created = admin.post("/tags", json={"name": name, "project": project["id"]})
    assert created.status_code == 201
    tag = created.json()["meta"]["id"]
    assert admin.post("/tags", json={"name": name, "project": project["id"]}).status_code == 400
    assert admin.post("/tags", json={"name": "x"}).status_code == 400
    assert admin.get(f"/tags/{tag}").json()["data"] == {
        "id": tag,
        "name": name,
        "project": project["id"],
        "type": "tags",
    }
    listed = admin.get("/tags", params={"project": project["id"]}).json()
    assert [t["id"] for t in listed["data"]] == [tag]
    assert admin.get(f"/projects/{project['id']}/tags").json()["data"][0]["id"] == tag

    item = project["item"]
    assert admin.post(f"/items/{item}/tags", json={"tag": tag}).status_code == 201
    again = admin.post(f"/items/{item}/tags", json={"tag": tag})
    assert again.status_code == 400 and "already" in again.json()["meta"]["message"]
    assert [t["id"] for t in admin.get(f"/items/{item}/tags").json()["data"]] == [tag]
    assert admin.get(f"/items/{item}/tags/{tag}").json()["data"]["name"] == name
    tagged = admin.get(f"/tags/{tag}/items").json()
    assert [i["id"] for i in tagged["data"]] == [item] and tagged["meta"]["pageInfo"][
        "totalResults"
    ] == 1

    assert admin.put(f"/tags/{tag}", json={"name": name + "!"}).status_code == 200
    assert admin.get(f"/tags/{tag}").json()["data"]["name"] == name + "!"
    assert admin.delete(f"/items/{item}/tags/{tag}").status_code == 204
    assert admin.get(f"/items/{item}/tags/{tag}").status_code == 404
    assert admin.delete(f"/items/{item}/tags/{tag}").status_code == 404
    admin.post(f"/items/{item}/tags", json={"tag": tag})
    assert admin.delete(f"/tags/{tag}").status_code == 204
    assert admin.get(f"/items/{item}/tags").json()["meta"]["pageInfo"]["totalResults"] == 0


def test_releases_count_their_items(admin: httpx.Client, project: dict[str, Any]) -> None:
    created = admin.post(
        "/releases",
        json={
            "name": "1.0",
            "description": "first",
            "releaseDate": "2025-06-30",
            "project": project["id"],
        },
    )
    assert created.status_code == 201, created.text
    release = created.json()["meta"]["id"]
    data = admin.get(f"/releases/{release}").json()["data"]
    assert (data["name"], data["itemCount"], data["active"], data["archived"]) == (
        "1.0",
        0,
        True,
        False,
    )
    assert data["releaseDate"] == "2025-06-30T00:00:00.000+0000"
    item = project["item"]
    assert (
        admin.patch(
            f"/items/{item}", json=[{"op": "add", "path": "/fields/release", "value": release}]
        ).status_code
        == 200
    )
    assert admin.get(f"/releases/{release}").json()["data"]["itemCount"] == 1
    with_release = admin.get(f"/items/{item}", params={"include": "data.fields.release"}).json()
    assert with_release["linked"]["releases"][str(release)]["name"] == "1.0"
    bad = admin.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/release", "value": 987654}]
    )
    assert bad.status_code == 400 and "release" in bad.json()["meta"]["message"]
    assert (
        admin.put(
            f"/releases/{release}",
            json={"name": "1.0.1", "releaseDate": "2025-07-01T12:00:00.000+0000"},
        ).status_code
        == 200
    )
    assert admin.get(f"/releases/{release}").json()["data"]["name"] == "1.0.1"
    listed = admin.get("/releases", params={"project": project["id"]}).json()
    assert [r["id"] for r in listed["data"]] == [release]
    admin.delete(f"/items/{item}")
    assert admin.get(f"/releases/{release}").json()["data"]["itemCount"] == 0
    assert (
        admin.post(
            "/releases", json={"name": "x", "project": project["id"], "releaseDate": "soon"}
        ).status_code
        == 400
    )
    assert admin.get("/releases").status_code == 400


def test_comments_and_replies(admin: httpx.Client, project: dict[str, Any]) -> None:
    item = project["item"]
    body = {
        "body": {"text": "Is this testable?"},
        "location": {"item": item},
        "commentType": "QUESTION",
    }
    created = admin.post("/comments", json=body)
    assert created.status_code == 201, created.text
    root = created.json()["meta"]["id"]
    reply = admin.post("/comments", json={"body": {"text": "Yes."}, "inReplyTo": root})
    assert reply.status_code == 201
    reply_id = reply.json()["meta"]["id"]
    general = admin.post(
        "/comments",
        json={"body": {"text": "FYI"}, "location": {"item": item}, "commentType": "GENERAL"},
    )
    assert general.status_code == 201
    comment = admin.get(f"/comments/{root}", params={"include": "data.location.item"}).json()
    assert comment["data"]["body"] == {"text": "Is this testable?"}
    assert comment["data"]["location"] == {"item": item, "project": project["id"]}
    assert comment["data"]["commentType"] == "QUESTION" and comment["data"]["status"] == "OPEN"
    assert comment["linked"]["items"][str(item)]["id"] == item
    replies = admin.get(f"/comments/{root}/replies").json()
    assert [c["id"] for c in replies["data"]] == [reply_id]
    assert replies["data"][0]["inReplyTo"] == root
    on_item = admin.get(f"/items/{item}/comments").json()
    assert on_item["meta"]["pageInfo"]["totalResults"] == 3
    roots = admin.get(f"/items/{item}/comments", params={"rootCommentsOnly": "true"}).json()
    assert reply_id not in [c["id"] for c in roots["data"]] and len(roots["data"]) == 2
    assert (
        admin.get("/comments", params={"maxResults": 50}).json()["meta"]["pageInfo"]["totalResults"]
        >= 3
    )
    for bad, word in (
        ({"body": {"text": "x"}}, "location"),
        ({"body": {"text": "x"}, "location": {"item": 987654}}, "location.item"),
        ({"body": {"text": "x"}, "location": {"item": item}, "commentType": "RANT"}, "commentType"),
        ({"location": {"item": item}}, "body is required"),
    ):
        response = admin.post("/comments", json=bad)
        assert response.status_code == 400 and word in response.json()["meta"]["message"], (
            response.text
        )
    feed = admin.get(
        "/activities", params={"project": project["id"], "objectType": "COMMENT"}
    ).json()
    assert len(feed["data"]) == 3 and all(a["item"] == item for a in feed["data"])
