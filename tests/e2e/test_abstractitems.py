"""GET /abstractitems: search by project, type, key, release, dates and text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.e2e.harness import Query, new_project, project_key, type_ids


@pytest.fixture
def data(admin: httpx.Client) -> dict[str, Any]:
    key = project_key("AB")
    project = new_project(admin, key)
    types = type_ids(admin)
    release = admin.post("/releases", json={"name": "R1", "project": project}).json()["meta"]["id"]
    ids = {}
    for name, type_key, extra in (
        ("Alpha login", "REQ", {"description": "50% of users (sic)"}),
        ("Beta export", "REQ", {"release": release}),
        ("Gamma crash", "DEF", {}),
    ):
        response = admin.post(
            "/items",
            json={
                "project": project,
                "itemType": types[type_key],
                "fields": {"name": name, **extra},
            },
        )
        ids[name.split()[0]] = response.json()["meta"]["id"]
    return {"project": project, "types": types, "ids": ids, "release": release, "key": key}


def _ids(admin: httpx.Client, params: Query) -> list[int]:
    response = admin.get("/abstractitems", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"]["pageInfo"]["totalResults"] >= len(body["data"])
    return [i["id"] for i in body["data"]]


def test_filters(admin: httpx.Client, data: dict[str, Any]) -> None:
    p, ids = data["project"], data["ids"]
    assert _ids(admin, {"project": p}) == [ids["Alpha"], ids["Beta"], ids["Gamma"]]
    assert _ids(admin, {"project": p, "itemType": data["types"]["DEF"]}) == [ids["Gamma"]]
    keys: Query = [("documentKey", f"{data['key']}-REQ-1"), ("documentKey", f"{data['key']}-DEF-1")]
    assert sorted(_ids(admin, keys)) == sorted([ids["Alpha"], ids["Gamma"]])
    assert _ids(admin, {"release": data["release"]}) == [ids["Beta"]]
    assert _ids(admin, [("project", p), ("contains", "EXPORT"), ("contains", "crash")]) == [
        ids["Beta"],
        ids["Gamma"],
    ]
    assert _ids(admin, {"project": p, "contains": "50%"}) == [ids["Alpha"]]
    assert _ids(admin, {"project": p, "contains": "5_%"}) == [], (
        "contains is literal, not a pattern"
    )
    assert _ids(admin, {"project": p, "contains": "(sic)"}) == [ids["Alpha"]]


def test_dates_sorting_and_paging(admin: httpx.Client, data: dict[str, Any]) -> None:
    p, ids = data["project"], data["ids"]
    hour_ago = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000+0000")
    later = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S+0000")
    assert len(_ids(admin, {"project": p, "createdDate": hour_ago})) == 3
    assert _ids(admin, {"project": p, "createdDate": later}) == []
    assert (
        len(_ids(admin, [("project", p), ("modifiedDate", hour_ago), ("modifiedDate", later)])) == 3
    )
    assert len(_ids(admin, {"project": p, "lastActivityDate": hour_ago})) == 3
    assert _ids(admin, {"project": p, "sortBy": "name.desc"}) == [
        ids["Gamma"],
        ids["Beta"],
        ids["Alpha"],
    ]
    assert (
        _ids(admin, {"project": p, "sortBy": "documentKey.asc"})[0] == ids["Gamma"]
    )  # DEF before REQ
    page = admin.get("/abstractitems", params={"project": p, "startAt": 1, "maxResults": 1}).json()
    assert page["meta"]["pageInfo"] == {"startIndex": 1, "resultCount": 1, "totalResults": 3}
    assert [i["id"] for i in page["data"]] == [ids["Beta"]]
    for bad in ({"sortBy": "colour.asc"}, {"sortBy": "name"}, {"createdDate": "yesterday"}):
        response = admin.get("/abstractitems", params={"project": p, **bad})
        assert response.status_code == 400
        assert next(iter(bad)) in response.json()["meta"]["message"]


def test_get_by_id(admin: httpx.Client, data: dict[str, Any]) -> None:
    alpha = data["ids"]["Alpha"]
    body = admin.get(f"/abstractitems/{alpha}", params={"include": "data.itemType"}).json()
    assert body["data"]["id"] == alpha and body["data"]["type"] == "items"
    assert body["linked"]["itemtypes"][str(body["data"]["itemType"])]["typeKey"] == "REQ"
    assert admin.get("/abstractitems/999999999").status_code == 404
    admin.delete(f"/items/{alpha}")
    assert admin.get(f"/abstractitems/{alpha}").status_code == 404
    assert alpha not in _ids(admin, {"project": data["project"]})
