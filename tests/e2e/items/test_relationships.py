"""Relationships, their default type, suspect links, and up- and downstream views."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.api import new_project, project_key, type_ids


@pytest.fixture
def setup(admin: httpx.Client) -> dict[str, Any]:
    key = project_key("RL")
    project = new_project(admin, key)
    types = type_ids(admin)
    rel_types = admin.get("/relationshiptypes").json()["data"]
    ids = []
    for name in ("Need", "Design", "Test"):
        response = admin.post(
            "/items", json={"project": project, "itemType": types["REQ"], "fields": {"name": name}}
        )
        ids.append(response.json()["meta"]["id"])
    return {
        "project": project,
        "items": ids,
        "default": next(t["id"] for t in rel_types if t["isDefault"]),
        "other": next(t["id"] for t in rel_types if not t["isDefault"]),
    }


def _relate(admin: httpx.Client, source: int, target: int, rel_type: int | None = None) -> int:
    body: dict[str, Any] = {"fromItem": source, "toItem": target}
    if rel_type is not None:
        body["relationshipType"] = rel_type
    response = admin.post("/relationships", json=body)
    assert response.status_code == 201, response.text
    return int(response.json()["meta"]["id"])


def test_create_read_update_delete(admin: httpx.Client, setup: dict[str, Any]) -> None:
    need, design, test = setup["items"]
    rel = _relate(admin, need, design, setup["other"])
    body = admin.get(f"/relationships/{rel}", params={"include": "data.fromItem"}).json()
    assert body["data"] == {
        "id": rel,
        "fromItem": need,
        "toItem": design,
        "relationshipType": setup["other"],
        "suspect": False,
        "type": "relationships",
    }
    assert body["linked"]["items"][str(need)]["fields"]["name"] == "Need"
    assert (
        admin.put(f"/relationships/{rel}", json={"fromItem": need, "toItem": test}).status_code
        == 200
    )
    changed = admin.get(f"/relationships/{rel}").json()["data"]
    assert (changed["toItem"], changed["relationshipType"]) == (test, setup["default"])
    deleted = admin.delete(f"/relationships/{rel}")
    assert deleted.status_code == 204
    assert deleted.content == b""
    assert admin.get(f"/relationships/{rel}").status_code == 404


def test_missing_or_invalid_type_falls_back_to_the_default(
    admin: httpx.Client, setup: dict[str, Any]
) -> None:
    need, design, test = setup["items"]
    for rel_type in (None, 987654):
        target = design if rel_type is None else test
        rel = _relate(admin, need, target, rel_type)
        assert (
            admin.get(f"/relationships/{rel}").json()["data"]["relationshipType"]
            == setup["default"]
        )


def test_bad_relationships(admin: httpx.Client, setup: dict[str, Any]) -> None:
    need, design, _test = setup["items"]
    _relate(admin, need, design)
    duplicate = admin.post("/relationships", json={"fromItem": need, "toItem": design})
    assert duplicate.status_code == 400
    assert "already exists" in duplicate.json()["meta"]["message"]
    to_self = admin.post("/relationships", json={"fromItem": need, "toItem": need})
    assert to_self.status_code == 400
    unknown = admin.post("/relationships", json={"fromItem": need, "toItem": 987654})
    assert unknown.status_code == 400
    assert "toItem" in unknown.json()["meta"]["message"]
    missing = admin.post("/relationships", json={"fromItem": need})
    assert missing.status_code == 400
    assert "toItem is required" in missing.json()["meta"]["message"]


def test_suspect_follows_upstream_changes(admin: httpx.Client, setup: dict[str, Any]) -> None:
    need, design, test = setup["items"]
    downstream = _relate(admin, need, design)
    upstream = _relate(admin, test, need)
    # status does not trigger suspect; name does.
    admin.patch(f"/items/{need}", json=[{"op": "add", "path": "/fields/assignedTo", "value": 1}])
    assert admin.get(f"/relationships/{downstream}").json()["data"]["suspect"] is False
    admin.patch(
        f"/items/{need}", json=[{"op": "replace", "path": "/fields/name", "value": "Need v2"}]
    )
    assert admin.get(f"/relationships/{downstream}").json()["data"]["suspect"] is True
    assert admin.get(f"/relationships/{upstream}").json()["data"]["suspect"] is False
    cleared = admin.delete(f"/relationships/{downstream}/suspect")
    assert cleared.status_code == 204
    assert admin.get(f"/relationships/{downstream}").json()["data"]["suspect"] is False


def test_up_and_downstream_views(admin: httpx.Client, setup: dict[str, Any]) -> None:
    need, design, test = setup["items"]
    _relate(admin, need, design)
    _relate(admin, need, test)
    _relate(admin, need, test, setup["other"])
    down = admin.get(f"/items/{need}/downstreamrelationships").json()
    assert down["meta"]["pageInfo"]["totalResults"] == 3
    related = admin.get(f"/items/{need}/downstreamrelated").json()
    assert sorted(i["id"] for i in related["data"]) == [design, test]
    assert related["meta"]["pageInfo"]["totalResults"] == 2
    up = admin.get(f"/items/{test}/upstreamrelated").json()
    assert [i["id"] for i in up["data"]] == [need]
    assert (
        admin.get(f"/items/{test}/upstreamrelationships").json()["meta"]["pageInfo"]["totalResults"]
        == 2
    )
    assert admin.get("/items/987654/downstreamrelated").status_code == 404
    to_design = admin.get(f"/items/{need}/downstreamrelationships").json()["data"]
    hidden = next(r["id"] for r in to_design if r["toItem"] == design)
    admin.delete(f"/items/{design}")
    assert [i["id"] for i in admin.get(f"/items/{need}/downstreamrelated").json()["data"]] == [test]
    # A deleted item's relationships leave every listing and count, and cannot be read.
    down = admin.get(f"/items/{need}/downstreamrelationships").json()
    assert down["meta"]["pageInfo"]["totalResults"] == 2
    assert hidden not in [r["id"] for r in down["data"]]
    listed = admin.get("/relationships", params={"project": setup["project"]}).json()
    assert hidden not in [r["id"] for r in listed["data"]]
    assert listed["meta"]["pageInfo"]["totalResults"] == 2
    assert admin.get(f"/relationships/{hidden}").status_code == 404


def test_project_listing_with_paging_last_id_and_omit_count(
    admin: httpx.Client, setup: dict[str, Any]
) -> None:
    need, design, test = setup["items"]
    ids = [_relate(admin, need, design), _relate(admin, need, test), _relate(admin, design, test)]
    listed = admin.get("/relationships", params={"project": setup["project"]}).json()
    assert [r["id"] for r in listed["data"]] == ids
    assert listed["meta"]["pageInfo"]["totalResults"] == 3
    after = admin.get(
        "/relationships",
        params={
            "project": setup["project"],
            "lastId": ids[0],
            "omitCount": "true",
            "maxResults": 1,
        },
    ).json()
    assert [r["id"] for r in after["data"]] == [ids[1]]
    assert after["meta"]["pageInfo"]["totalResults"] > after["meta"]["pageInfo"]["resultCount"]
    end = admin.get(
        "/relationships",
        params={"project": setup["project"], "lastId": ids[2], "omitCount": "true"},
    ).json()
    assert end["data"] == []
    assert end["meta"]["pageInfo"]["totalResults"] == 0
    assert admin.get("/relationships").status_code == 400
    feed = admin.get(
        "/activities", params={"project": setup["project"], "objectType": "RELATIONSHIP"}
    ).json()
    assert len(feed["data"]) == 3
