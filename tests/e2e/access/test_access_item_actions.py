"""The access matrix for what else one does to items: moves, workflow, sync, links,
duplicates and categories. Each role x read, list, create, change, delete where the
family has them; 2xx where the role allows it, 401 with a message where it does not.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.access.test_access_search import labs
from tests.e2e.api import (
    MATRIX_ROLES,
    Team,
    assert_error,
    create_item,
    grant,
    item_types,
    new_project,
    project_key,
    unique,
)


def _project(admin: httpx.Client) -> dict[str, Any]:
    key = project_key("OT")
    return {"id": new_project(admin, key), "key": key, "types": item_types(admin)}


def _ok(response: httpx.Response, role: str) -> None:
    assert response.status_code in (200, 201, 204), (role, response.request.url, response.text)


def _cell(response: httpx.Response, allowed: bool, role: str, *refusal: str) -> None:
    """One cell of the matrix: 2xx where the role allows it, else 401 naming ``refusal``."""
    if allowed:
        _ok(response, role)
    else:
        assert_error(response, 401, *refusal)


def test_moves_by_role(team: Team, admin: httpx.Client) -> None:
    target = _project(admin)
    for role in MATRIX_ROLES[:-1]:
        grant(admin, target["id"], "READ_WRITE", user=team.ids[role])
    may_write = team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        first = create_item(admin, team.project, f"First for {role}")
        second = create_item(admin, team.project, f"Second for {role}")
        placed = client.put(
            "/items/treelocation",
            json={"item": first, "parent": {"project": team.project["id"]}, "peer": second},
        )
        moved = client.put(f"/items/{second}/location", json={"parent": {"project": target["id"]}})
        if may_write[role]:
            _ok(placed, role)
            _ok(moved, role)
            assert moved.json()["data"]["movedItems"] == [second]
        else:
            assert_error(placed, 401, f"item {first}")
            assert_error(moved, 401, f"item {second}")
            assert admin.get(f"/items/{second}").json()["data"]["project"] == team.project["id"]


def test_a_move_needs_write_on_the_target_project(team: Team, admin: httpx.Client) -> None:
    writer = team.clients["READ_WRITE"]
    elsewhere, readable = _project(admin), _project(admin)
    grant(admin, readable["id"], "READ_ONLY", user=team.ids["READ_WRITE"])
    item = create_item(admin, team.project, "Stays")
    unseen = writer.put(f"/items/{item}/location", json={"parent": {"project": elsewhere["id"]}})
    assert_error(unseen, 401, "no access", f"project {elsewhere['id']}")
    read_only = writer.put(f"/items/{item}/location", json={"parent": {"project": readable["id"]}})
    assert_error(read_only, 401, "READ_ONLY", f"project {readable['id']}")
    assert admin.get(f"/items/{item}").json()["data"]["project"] == team.project["id"]
    # Nor may a writer of the target pull in an item of a project it cannot read.
    foreign = create_item(admin, elsewhere, "Foreign")
    pulled = writer.put(
        f"/items/{foreign}/location", json={"parent": {"project": team.project["id"]}}
    )
    assert_error(pulled, 401, "no access", f"item {foreign}")


def test_workflow_by_role(team: Team, admin: httpx.Client) -> None:
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        item = create_item(admin, team.project, f"Flow for {role}")
        options = client.get(f"/items/{item}/workflowtransitionoptions")
        step = admin.get(f"/items/{item}/workflowtransitionoptions").json()["data"][0]["id"]
        done = client.post(f"/items/{item}/workflowtransitions", json={"transitionId": step})
        # Refused before the step is looked at: no hint of the workflow's steps either.
        unknown = client.post(f"/items/{item}/workflowtransitions", json={"transitionId": "9876"})
        if may_read[role]:
            assert [t["id"] for t in options.json()["data"]] == [step], role
        else:
            assert_error(options, 401, "no access", f"item {item}")
        if may_write[role]:
            _ok(done, role)
            assert_error(unknown, 400, "9876")
        else:
            assert_error(done, 401, f"item {item}")
            assert_error(unknown, 401, f"item {item}")
            status = admin.get(f"/items/{item}").json()["data"]["fields"]["status"]
            assert status != step


def test_sync_by_role(team: Team, admin: httpx.Client) -> None:
    other = _project(admin)
    pool = create_item(admin, team.project, "Pool")
    member = create_item(admin, team.project, "Pool")
    hidden = create_item(admin, other, "Pool")
    for joined in (member, hidden):
        assert admin.post(f"/items/{pool}/synceditems", json={"item": joined}).status_code == 201
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        listed = client.get(f"/items/{pool}/synceditems")
        status = client.get(f"/items/{pool}/synceditems/{member}/syncstatus")
        status_hidden = client.get(f"/items/{pool}/synceditems/{hidden}/syncstatus")
        one, two = (create_item(admin, team.project, f"Sync {role}") for _ in range(2))
        added = client.post(f"/items/{one}/synceditems", json={"item": two})
        if added.status_code != 201:
            assert admin.post(f"/items/{one}/synceditems", json={"item": two}).status_code == 201
        removed = client.delete(f"/items/{one}/synceditems/{two}")
        if role == "ORG_ADMIN":
            assert [i["id"] for i in listed.json()["data"]] == [member, hidden]
            assert listed.json()["meta"]["pageInfo"]["totalResults"] == 2
            assert status_hidden.status_code == 200
        elif may_read[role]:
            # The member in a project the caller may not read is left out, and not counted.
            assert [i["id"] for i in listed.json()["data"]] == [member], role
            assert listed.json()["meta"]["pageInfo"]["totalResults"] == 1, role
            assert status.status_code == 200, (role, status.text)
            assert_error(status_hidden, 401, "no access", f"item {hidden}")
        else:
            assert_error(listed, 401, "no access", f"item {pool}")
            assert_error(status, 401, "no access")
        for response in (added, removed):
            _cell(response, may_write[role], role, f"item {one}")
    # A writer cannot pull an item of a project it cannot read into a pool, nor the other
    # way round.
    writer = team.clients["READ_WRITE"]
    mine = create_item(admin, team.project, "Mine")
    foreign = create_item(admin, other, "Mine")
    assert_error(
        writer.post(f"/items/{mine}/synceditems", json={"item": foreign}), 401, f"item {foreign}"
    )
    assert_error(
        writer.post(f"/items/{foreign}/synceditems", json={"item": mine}), 401, f"item {foreign}"
    )
    assert_error(writer.delete(f"/items/{pool}/synceditems/{hidden}"), 401, f"item {hidden}")


def test_links_and_duplicates_by_role(team: Team, admin: httpx.Client) -> None:
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        item = create_item(admin, team.project, f"Linked for {role}")
        link = admin.post(f"/items/{item}/links", json={"url": "https://example.com/a"})
        link_id = link.json()["meta"]["id"]
        listed = client.get(f"/items/{item}/links")
        read = client.get(f"/items/{item}/links/{link_id}")
        created = client.post(f"/items/{item}/links", json={"url": "https://example.com/b"})
        changed = client.put(
            f"/items/{item}/links/{link_id}", json={"url": "https://example.com/c"}
        )
        removed = client.delete(f"/items/{item}/links/{link_id}")
        duplicated = client.post(f"/items/{item}/duplicate", json={"includeLinks": True})
        if may_read[role]:
            assert link_id in [k["id"] for k in listed.json()["data"]], role
            assert read.status_code == 200, (role, read.text)
        else:
            assert_error(listed, 401, "no access", f"item {item}")
            assert_error(read, 401, "no access", f"item {item}")
        if may_write[role]:
            for response in (created, changed, removed, duplicated):
                _ok(response, role)
            copy = duplicated.json()["meta"]["id"]
            assert admin.get(f"/items/{copy}").json()["data"]["project"] == team.project["id"]
        else:
            for response in (created, changed, removed):
                assert_error(response, 401, f"item {item}")
            # READ on the source, then WRITE on the project the copy goes to.
            what = f"project {team.project['id']}" if may_read[role] else f"item {item}"
            assert_error(duplicated, 401, what)
            urls = [k["url"] for k in admin.get(f"/items/{item}/links").json()["data"]]
            assert urls == ["https://example.com/a"], role


def test_categories_by_role(team: Team, admin: httpx.Client) -> None:
    made = admin.post(labs(admin, "/categories"), json={"name": unique("cat")})
    assert made.status_code == 201, made.text
    category = made.json()["meta"]["id"]
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        item = create_item(admin, team.project, f"Categorised for {role}")
        url = labs(client, f"/items/{item}/categories")
        added = client.post(url, json={"add": [category]})
        if added.status_code != 201:
            assert admin.post(url, json={"add": [category]}).status_code == 201
        listed = client.get(url)
        removed = client.post(url, json={"remove": [category]})
        # Category paths themselves belong to no project: any user lists them.
        assert client.get(labs(client, "/categories")).status_code == 200, role
        if may_read[role]:
            assert [c["id"] for c in listed.json()["data"]] == [category], role
        else:
            assert_error(listed, 401, "no access", f"item {item}")
        for response in (added, removed):
            _cell(response, may_write[role], role, f"item {item}")
