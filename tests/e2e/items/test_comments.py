"""Comments and replies over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import create_item


def test_comments_and_replies(admin: httpx.Client, project: dict[str, Any]) -> None:
    item = create_item(admin, project, "I")
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
    assert comment["data"]["commentType"] == "QUESTION"
    assert comment["data"]["status"] == "OPEN"
    assert comment["linked"]["items"][str(item)]["id"] == item
    replies = admin.get(f"/comments/{root}/replies").json()
    assert [c["id"] for c in replies["data"]] == [reply_id]
    assert replies["data"][0]["inReplyTo"] == root
    on_item = admin.get(f"/items/{item}/comments").json()
    assert on_item["meta"]["pageInfo"]["totalResults"] == 3
    roots = admin.get(f"/items/{item}/comments", params={"rootCommentsOnly": "true"}).json()
    assert reply_id not in [c["id"] for c in roots["data"]]
    assert len(roots["data"]) == 2
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
        assert response.status_code == 400, response.text
        assert word in response.json()["meta"]["message"], response.text
    feed = admin.get(
        "/activities", params={"project": project["id"], "objectType": "COMMENT"}
    ).json()
    assert len(feed["data"]) == 3
    assert all(a["item"] == item for a in feed["data"])
