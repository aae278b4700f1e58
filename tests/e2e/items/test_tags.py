"""Tags and the items they tag over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import create_item, unique


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

    item = create_item(admin, project, "I")
    assert admin.post(f"/items/{item}/tags", json={"tag": tag}).status_code == 201
    again = admin.post(f"/items/{item}/tags", json={"tag": tag})
    assert again.status_code == 400
    assert "already" in again.json()["meta"]["message"]
    assert [t["id"] for t in admin.get(f"/items/{item}/tags").json()["data"]] == [tag]
    assert admin.get(f"/items/{item}/tags/{tag}").json()["data"]["name"] == name
    tagged = admin.get(f"/tags/{tag}/items").json()
    assert [i["id"] for i in tagged["data"]] == [item]
    assert tagged["meta"]["pageInfo"]["totalResults"] == 1

    assert admin.put(f"/tags/{tag}", json={"name": name + "!"}).status_code == 200
    assert admin.get(f"/tags/{tag}").json()["data"]["name"] == name + "!"
    assert admin.delete(f"/items/{item}/tags/{tag}").status_code == 204
    assert admin.get(f"/items/{item}/tags/{tag}").status_code == 404
    assert admin.delete(f"/items/{item}/tags/{tag}").status_code == 404
    admin.post(f"/items/{item}/tags", json={"tag": tag})
    assert admin.delete(f"/tags/{tag}").status_code == 204
    assert admin.get(f"/items/{item}/tags").json()["meta"]["pageInfo"]["totalResults"] == 0
