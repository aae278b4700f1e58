"""Workflow transitions and status changes over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import create_item


def test_workflow_transitions(admin: httpx.Client, project: dict[str, Any]) -> None:
    item_id = create_item(admin, project, "Flow")
    options = admin.get(f"/items/{item_id}/workflowtransitionoptions").json()
    assert [t["action"] for t in options["data"]] == ["Submit for review"]
    step = options["data"][0]
    bad = admin.post(f"/items/{item_id}/workflowtransitions", json={"transitionId": "987654"})
    assert bad.status_code == 400
    assert "Submit for review" in bad.json()["meta"]["message"]
    done = admin.post(
        f"/items/{item_id}/workflowtransitions",
        json={"transitionId": step["id"], "comment": "ready"},
    )
    assert done.status_code == 201, done.text
    assert admin.get(f"/items/{item_id}").json()["data"]["fields"]["status"] == step["newStatus"]
    after = [
        t["action"] for t in admin.get(f"/items/{item_id}/workflowtransitionoptions").json()["data"]
    ]
    assert sorted(after) == ["Approve", "Reject"]
    feed = admin.get("/activities", params={"project": project["id"], "objectType": "ITEM"}).json()[
        "data"
    ]
    assert feed[0]["userComment"] == "ready"


def _statuses(admin: httpx.Client, item_type: dict[str, Any]) -> dict[str, int]:
    status = next(f for f in item_type["fields"] if f["name"] == "status")
    options = admin.get(f"/picklists/{status['pickList']}/options", params={"maxResults": 50})
    return {o["name"]: o["id"] for o in options.json()["data"]}


def test_status_changes_by_put_and_patch_follow_the_workflow(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    status = _statuses(admin, project["types"]["REQ"])
    item_id = create_item(admin, project, "Flow")

    def current() -> int:
        return int(admin.get(f"/items/{item_id}").json()["data"]["fields"]["status"])

    def patch(value: int) -> httpx.Response:
        return admin.patch(
            f"/items/{item_id}", json=[{"op": "replace", "path": "/fields/status", "value": value}]
        )

    skipped = patch(status["Approved"])
    assert skipped.status_code == 400, skipped.text
    message = skipped.json()["meta"]["message"]
    assert "Draft" in message
    assert "Approved" in message
    assert "Submit for review" in message
    data = admin.get(f"/items/{item_id}").json()["data"]
    data["fields"]["status"] = status["Approved"]
    put = admin.put(f"/items/{item_id}", json=data)
    assert put.status_code == 400
    assert "Submit for review" in put.json()["meta"]["message"]
    assert current() == status["Draft"]

    data["fields"]["status"] = status["Draft"]
    data["fields"]["name"] = "Flow, renamed"
    assert admin.put(f"/items/{item_id}", json=data).status_code == 200, "unchanged status"
    left_out = admin.put(f"/items/{item_id}", json={"fields": {"name": "Flow"}})
    assert left_out.status_code == 200, "kept, not cleared"
    assert current() == status["Draft"], "kept, not cleared"

    assert patch(status["In Review"]).status_code == 200, "an allowed step"
    removed = admin.patch(f"/items/{item_id}", json=[{"op": "remove", "path": "/fields/status"}])
    assert removed.status_code == 400
    assert "no status" in removed.json()["meta"]["message"]
    back = patch(status["Draft"])
    assert back.status_code == 400
    assert "'Approve' to Approved" in back.json()["meta"]["message"]
    assert "'Reject' to Rejected" in back.json()["meta"]["message"]
    assert current() == status["In Review"]

    base = {"project": project["id"], "itemType": project["types"]["REQ"]["id"]}
    approved = admin.post(
        "/items", json={**base, "fields": {"name": "x", "status": status["Approved"]}}
    )
    assert approved.status_code == 400
    assert "Draft" in approved.json()["meta"]["message"]
    draft = admin.post("/items", json={**base, "fields": {"name": "x", "status": status["Draft"]}})
    assert draft.status_code == 201, draft.text


def test_status_without_a_workflow_changes_freely(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    feature = project["types"]["FEAT"]
    status = _statuses(admin, feature)
    created = admin.post(
        "/items",
        json={
            "project": project["id"],
            "itemType": feature["id"],
            "fields": {"name": "f", "status": status["Approved"]},
        },
    )
    assert created.status_code == 201, created.text
    item_id = created.json()["meta"]["id"]
    changed = admin.patch(
        f"/items/{item_id}",
        json=[{"op": "replace", "path": "/fields/status", "value": status["Draft"]}],
    )
    assert changed.status_code == 200, changed.text
