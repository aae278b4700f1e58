"""Synchronized items and their sync status over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import create_item


def test_synchronized_items(admin: httpx.Client, project: dict[str, Any]) -> None:
    first = create_item(admin, project, "Shared")
    second = create_item(admin, project, "Shared")
    joined = admin.post(f"/items/{first}/synceditems", json={"item": second})
    assert joined.status_code == 201
    global_ids = {admin.get(f"/items/{i}").json()["data"]["globalId"] for i in (first, second)}
    assert len(global_ids) == 1
    assert [i["id"] for i in admin.get(f"/items/{first}/synceditems").json()["data"]] == [second]
    assert admin.get(f"/items/{first}/synceditems/{second}/syncstatus").json()["data"] == {
        "inSync": True,
        "collectionSummary": {"totalChildren": 0, "totalMissing": 0, "totalOutOfSync": 0},
    }
    admin.patch(
        f"/items/{second}", json=[{"op": "replace", "path": "/fields/name", "value": "Drifted"}]
    )
    assert (
        admin.get(f"/items/{first}/synceditems/{second}/syncstatus").json()["data"]["inSync"]
        is False
    )
    again = admin.post(f"/items/{first}/synceditems", json={"item": second})
    assert again.status_code == 400
    assert admin.delete(f"/items/{first}/synceditems/{second}").status_code == 204
    assert admin.get(f"/items/{first}/synceditems").json()["data"] == []
    assert admin.get(f"/items/{first}/synceditems/{second}/syncstatus").status_code == 404


def test_sync_status_summarises_the_children(admin: httpx.Client, project: dict[str, Any]) -> None:
    def sync(one: int, other: int) -> None:
        response = admin.post(f"/items/{one}/synceditems", json={"item": other})
        assert response.status_code == 201, response.text

    def status(one: int, other: int) -> dict[str, Any]:
        response = admin.get(f"/items/{one}/synceditems/{other}/syncstatus")
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()["data"]
        return data

    source, copy = create_item(admin, project, "Spec"), create_item(admin, project, "Spec")
    sync(source, copy)
    same, drifted, only_here = (create_item(admin, project, n, parent=source) for n in "ABC")
    twin_same = create_item(admin, project, "A", parent=copy)
    twin_drifted = create_item(admin, project, "B (changed)", parent=copy)
    sync(same, twin_same)
    sync(drifted, twin_drifted)
    assert status(source, copy) == {
        "inSync": False,
        "collectionSummary": {"totalChildren": 3, "totalMissing": 1, "totalOutOfSync": 1},
    }
    # From the other side: two children, both with a counterpart, one of them different.
    assert status(copy, source)["collectionSummary"] == {
        "totalChildren": 2,
        "totalMissing": 0,
        "totalOutOfSync": 1,
    }
    admin.patch(
        f"/items/{twin_drifted}", json=[{"op": "replace", "path": "/fields/name", "value": "B"}]
    ).raise_for_status()
    sync(only_here, create_item(admin, project, "C", parent=copy))
    assert status(source, copy) == {
        "inSync": True,
        "collectionSummary": {"totalChildren": 3, "totalMissing": 0, "totalOutOfSync": 0},
    }
    # A child the synced item has and the item lacks: the collections differ.
    create_item(admin, project, "D", parent=copy)
    assert status(source, copy)["inSync"] is False
    assert status(source, copy)["collectionSummary"]["totalMissing"] == 0
    assert status(copy, source)["collectionSummary"]["totalMissing"] == 1
