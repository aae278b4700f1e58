"""The access matrix for relationships: each role x read, list, create, change, delete.

A relationship belongs to its from-item's project. Reading one needs READ on the projects
of both its items; creating or changing one needs WRITE on the from-item's project and
READ on the to-item's; deleting one or clearing its suspect flag needs WRITE. Lists,
related items and includes leave out what the caller may not read, and count only what
is left.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import (
    MATRIX_ROLES,
    Team,
    assert_error,
    create_item,
    created_id,
    grant,
    ids_of,
    new_project,
    total_of,
)


def _relate(client: httpx.Client, source: int, target: int) -> httpx.Response:
    return client.post("/relationships", json={"fromItem": source, "toItem": target})


def _related(admin: httpx.Client, source: int, target: int) -> int:
    return created_id(_relate(admin, source, target))


def _elsewhere(admin: httpx.Client, team: Team) -> dict[str, Any]:
    """Another project, on which no member of the team has a role."""
    return {"id": new_project(admin), "types": team.project["types"]}


def test_relationships_by_role(team: Team, admin: httpx.Client) -> None:
    project = team.project
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        a, b, c = (create_item(admin, project, f"{role} {n}") for n in "abc")
        rel = _related(admin, a, b)
        read = client.get(f"/relationships/{rel}")
        listed = client.get("/relationships", params={"project": project["id"]})
        down = client.get(f"/items/{a}/downstreamrelationships")
        up = client.get(f"/items/{b}/upstreamrelated")
        created = _relate(client, a, c)
        changed = client.put(f"/relationships/{rel}", json={"fromItem": c, "toItem": b})
        suspect = client.delete(f"/relationships/{rel}/suspect")
        removed = client.delete(f"/relationships/{rel}")
        if may_read[role]:
            assert read.status_code == 200, (role, read.text)
            assert rel in ids_of(listed), role
            assert rel in ids_of(down), role
            assert a in ids_of(up), role
        else:
            assert_error(read, 401, "no access", f"relationship {rel}")
            assert_error(listed, 401, "no access", f"project {project['id']}")
            assert_error(down, 401, "no access", f"item {a}")
            assert_error(up, 401, "no access", f"item {b}")
        for response in (created, changed, suspect, removed):
            if may_write[role]:
                assert response.status_code in (200, 201, 204), (role, response.text)
            else:
                assert_error(response, 401)
        if role == "READ_ONLY":
            assert_error(removed, 401, "READ_ONLY", "READ_WRITE", f"relationship {rel}")


def test_relationships_to_unreadable_items_stay_hidden(team: Team, admin: httpx.Client) -> None:
    """A relationship into a project the caller may not read: left out of lists, counts,
    related items and includes; read alone, it is refused."""
    mine = create_item(admin, team.project, "Mine")
    other = _elsewhere(admin, team)
    theirs = create_item(admin, other, "Theirs")
    seen = create_item(admin, team.project, "Seen")
    out = _related(admin, mine, theirs)
    back = _related(admin, theirs, mine)
    inside = _related(admin, mine, seen)
    reader = team.clients["READ_ONLY"]
    listed = reader.get(
        "/relationships", params={"project": team.project["id"], "include": "data.toItem"}
    )
    assert ids_of(listed) == [inside]
    assert total_of(listed) == 1
    assert set(listed.json()["linked"]["items"]) == {str(seen)}
    down = reader.get(f"/items/{mine}/downstreamrelationships")
    assert (ids_of(down), total_of(down)) == ([inside], 1)
    up = reader.get(f"/items/{mine}/upstreamrelationships")
    assert (ids_of(up), total_of(up)) == ([], 0)
    related = reader.get(f"/items/{mine}/downstreamrelated")
    assert (ids_of(related), total_of(related)) == ([seen], 1)
    upstream = reader.get(f"/items/{mine}/upstreamrelated")
    assert (ids_of(upstream), total_of(upstream)) == ([], 0)
    for rel in (out, back):
        assert_error(reader.get(f"/relationships/{rel}"), 401, "no access", f"relationship {rel}")
    # The organisation admin sees both ends.
    assert total_of(admin.get(f"/items/{mine}/downstreamrelated")) == 2
    assert total_of(admin.get("/relationships", params={"project": team.project["id"]})) == 2


def test_a_relationship_across_projects_needs_write_where_it_starts(
    team: Team, admin: httpx.Client
) -> None:
    mine = create_item(admin, team.project, "Start")
    other = _elsewhere(admin, team)
    theirs = create_item(admin, other, "End")
    writer = team.clients["READ_WRITE"]
    # No role on the other project: the to-item cannot be read.
    assert_error(_relate(writer, mine, theirs), 401, "no access", f"item {theirs}")
    grant(admin, other["id"], "READ_ONLY", user=team.ids["READ_WRITE"])
    across = _relate(writer, mine, theirs)
    assert across.status_code == 201, across.text
    rel = int(across.json()["meta"]["id"])
    # READ on the from-item's project is not enough to start one there.
    assert_error(_relate(writer, theirs, mine), 401, "READ_ONLY", f"item {theirs}")
    assert_error(
        writer.put(f"/relationships/{rel}", json={"fromItem": theirs, "toItem": mine}),
        401,
        f"item {theirs}",
    )
    assert writer.get(f"/relationships/{rel}").status_code == 200
    assert writer.delete(f"/relationships/{rel}").status_code == 204
