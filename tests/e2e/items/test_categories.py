"""Category paths, a labs feature."""

from __future__ import annotations

import httpx

from tests.e2e.api import MakeUser, grant, new_project, project_key, type_ids, unique
from tests.e2e.topology import System


def test_category_paths_and_items(
    system: System, admin: httpx.Client, labs: httpx.Client, make_user: MakeUser
) -> None:
    top_name = unique("Safety")
    top = labs.post("/categories", json={"name": top_name})
    assert top.status_code == 201, top.text
    top_id = top.json()["meta"]["id"]
    child_id = labs.post("/categories", json={"name": "ASIL-B", "parent": top_id}).json()["meta"][
        "id"
    ]
    assert labs.post("/categories", json={"name": "ASIL-B", "parent": top_id}).status_code == 400
    assert labs.post("/categories", json={"name": "x", "parent": 987654}).status_code == 400
    paths = {
        c["id"]: c["path"]
        for c in labs.get("/categories", params={"maxResults": 50}).json()["data"]
    }
    assert paths[child_id] == f"{top_name}/ASIL-B"
    assert (
        labs.put(f"/categories/{child_id}/visibility", json={"visible": False}).status_code == 200
    )
    hidden = next(
        c
        for c in labs.get("/categories", params={"maxResults": 50}).json()["data"]
        if c["id"] == child_id
    )
    assert hidden["visible"] is False

    key = project_key("CT")
    project = new_project(admin, key)
    req = type_ids(admin)["REQ"]
    item = admin.post(
        "/items", json={"project": project, "itemType": req, "fields": {"name": "c"}}
    ).json()["meta"]["id"]
    assert (
        labs.post(f"/items/{item}/categories", json={"add": [top_id, child_id]}).status_code == 201
    )
    assert {c["id"] for c in labs.get(f"/items/{item}/categories").json()["data"]} == {
        top_id,
        child_id,
    }
    assert labs.post(f"/items/{item}/categories", json={"remove": [top_id]}).status_code == 201
    assert [c["id"] for c in labs.get(f"/items/{item}/categories").json()["data"]] == [child_id]
    assert labs.post(f"/items/{item}/categories", json={"add": [987654]}).status_code == 400
    assert labs.post(f"/items/{item}/categories", json={}).status_code == 400
    assert admin.get("/categories").status_code == 404, "labs only"
    user_id, username, password, _client = make_user()
    with system.client((username, password), version="labs") as user_labs:
        assert user_labs.post("/categories", json={"name": unique("n")}).status_code == 401
        # Applying categories changes the item: WRITE on its project.
        assert (
            user_labs.post(f"/items/{item}/categories", json={"add": [top_id]}).status_code == 401
        )
        grant(admin, project, user=user_id)
        assert (
            user_labs.post(f"/items/{item}/categories", json={"add": [top_id]}).status_code == 201
        )
