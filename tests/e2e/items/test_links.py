"""URL links of items over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import create_item


def test_links(admin: httpx.Client, project: dict[str, Any]) -> None:
    item_id = create_item(admin, project, "Linked")
    created = admin.post(
        f"/items/{item_id}/links", json={"url": "https://example.com/spec", "description": "Spec"}
    )
    assert created.status_code == 201
    link = created.json()["meta"]["id"]
    assert (
        admin.get(f"/items/{item_id}/links/{link}").json()["data"]["url"]
        == "https://example.com/spec"
    )
    assert (
        admin.put(
            f"/items/{item_id}/links/{link}", json={"url": "https://example.com/v2"}
        ).status_code
        == 200
    )
    listed = admin.get(f"/items/{item_id}/links").json()
    assert [(x["id"], x["url"]) for x in listed["data"]] == [(link, "https://example.com/v2")]
    assert admin.post(f"/items/{item_id}/links", json={"url": "not a url"}).status_code == 400
    assert admin.delete(f"/items/{item_id}/links/{link}").status_code == 204
    assert admin.get(f"/items/{item_id}/links/{link}").status_code == 404
    feed = admin.get("/activities", params={"project": project["id"], "objectType": "URL"}).json()[
        "data"
    ]
    assert [(a["eventType"], a["item"], a["details"]) for a in feed] == [
        ("DELETE", item_id, "link https://example.com/v2 deleted"),
        ("UPDATE", item_id, "link https://example.com/v2 updated"),
        ("CREATE", item_id, "link https://example.com/spec created"),
    ]
