"""Releases over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import create_item


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
    item = create_item(admin, project, "I")
    assert (
        admin.patch(
            f"/items/{item}", json=[{"op": "add", "path": "/fields/release", "value": release}]
        ).status_code
        == 200
    )
    assert admin.get(f"/releases/{release}").json()["data"]["itemCount"] == 1
    # A change that names the same release keeps it counted; one without it, not.
    for operation, count in (
        ({"op": "replace", "path": "/fields/name", "value": "I2"}, 1),
        ({"op": "remove", "path": "/fields/release"}, 0),
        ({"op": "add", "path": "/fields/release", "value": release}, 1),
    ):
        assert admin.patch(f"/items/{item}", json=[operation]).status_code == 200
        assert admin.get(f"/releases/{release}").json()["data"]["itemCount"] == count
    with_release = admin.get(f"/items/{item}", params={"include": "data.fields.release"}).json()
    assert with_release["linked"]["releases"][str(release)]["name"] == "1.0"
    bad = admin.patch(
        f"/items/{item}", json=[{"op": "replace", "path": "/fields/release", "value": 987654}]
    )
    assert bad.status_code == 400
    assert "release" in bad.json()["meta"]["message"]
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
