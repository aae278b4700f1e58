"""The access matrix for tags: each role x read, list, create, change, delete, and tagging.

Reading a tag needs READ on its project; creating, renaming and deleting one, and tagging
or untagging an item, need WRITE. ``/tags/{id}/items`` lists and counts only the items
the caller may read.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import (
    MATRIX_ROLES,
    Team,
    assert_answers,
    assert_error,
    create_item,
    created_id,
    ids_of,
    new_project,
    total_of,
    unique,
)


def _tag(client: httpx.Client, project: int) -> httpx.Response:
    return client.post("/tags", json={"name": unique("tag "), "project": project})


def _new_tag(admin: httpx.Client, project: int) -> int:
    return created_id(_tag(admin, project))


def test_tags_by_role(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        tag = _new_tag(admin, project)
        item = create_item(admin, team.project, f"Tagged for {role}")
        assert admin.post(f"/items/{item}/tags", json={"tag": tag}).status_code == 201
        spare = _new_tag(admin, project)
        reads = {
            "tag": client.get(f"/tags/{tag}"),
            "list": client.get("/tags", params={"project": project}),
            "project tags": client.get(f"/projects/{project}/tags"),
            "item tags": client.get(f"/items/{item}/tags"),
            "item tag": client.get(f"/items/{item}/tags/{tag}"),
            "tagged": client.get(f"/tags/{tag}/items"),
        }
        writes = {
            "create": _tag(client, project),
            "rename": client.put(f"/tags/{tag}", json={"name": unique("renamed ")}),
            "tag item": client.post(f"/items/{item}/tags", json={"tag": spare}),
            "untag item": client.delete(f"/items/{item}/tags/{tag}"),
            "delete": client.delete(f"/tags/{spare}"),
        }
        assert_answers(reads, may_read[role], role, "no access")
        if may_read[role]:
            assert tag in ids_of(reads["list"]), role
            assert item in ids_of(reads["tagged"]), role
        assert_answers(writes, may_write[role], role)
        if role == "READ_ONLY":
            assert_error(writes["delete"], 401, "READ_ONLY", "READ_WRITE", f"tag {spare}")
            assert_error(writes["tag item"], 401, "READ_ONLY", f"item {item}")


def test_tags_of_other_projects_do_not_leak(team: Team, admin: httpx.Client) -> None:
    other: dict[str, Any] = {"id": new_project(admin), "types": team.project["types"]}
    theirs = _new_tag(admin, other["id"])
    mine = _new_tag(admin, team.project["id"])
    reader = team.clients["READ_ONLY"]
    assert_error(reader.get(f"/tags/{theirs}"), 401, "no access", f"tag {theirs}")
    assert_error(reader.get(f"/tags/{theirs}/items"), 401, "no access", f"tag {theirs}")
    assert_error(reader.get("/tags", params={"project": other["id"]}), 401, "no access")
    listed = reader.get("/tags", params={"project": team.project["id"]})
    assert ids_of(listed) == [mine]
    assert total_of(listed) == 1


def test_tagged_items_count_only_readable_ones(team: Team, admin: httpx.Client) -> None:
    """An item that carried the tag and moved to a project the caller may not read is not
    listed, linked or counted."""
    project = team.project["id"]
    tag = _new_tag(admin, project)
    kept = create_item(admin, team.project, "Stays")
    moved = create_item(admin, team.project, "Moves")
    for item in (kept, moved):
        assert admin.post(f"/items/{item}/tags", json={"tag": tag}).status_code == 201
    other = new_project(admin)
    move = admin.put(f"/items/{moved}/location", json={"parent": {"project": other}})
    assert move.status_code == 200, move.text
    reader = team.clients["READ_ONLY"]
    listed = reader.get(f"/tags/{tag}/items", params={"include": "data.project"})
    assert ids_of(listed) == [kept]
    assert total_of(listed) == 1
    assert set(listed.json()["linked"]["projects"]) == {str(project)}
