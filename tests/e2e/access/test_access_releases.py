"""The access matrix for releases: each role x read, list, create, change.

Reading a release needs READ on its project; creating or changing one needs WRITE.
Releases have no delete in the contract.
"""

from __future__ import annotations

import httpx

from tests.e2e.api import (
    MATRIX_ROLES,
    Team,
    assert_error,
    created_id,
    ids_of,
    new_project,
    total_of,
    unique,
)


def _release(client: httpx.Client, project: int) -> httpx.Response:
    return client.post("/releases", json={"name": unique("R "), "project": project})


def _new_release(admin: httpx.Client, project: int) -> int:
    return created_id(_release(admin, project))


def test_releases_by_role(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        release = _new_release(admin, project)
        read = client.get(f"/releases/{release}")
        listed = client.get("/releases", params={"project": project})
        created = _release(client, project)
        changed = client.put(f"/releases/{release}", json={"name": unique("renamed ")})
        if may_read[role]:
            assert read.status_code == 200, (role, read.text)
            assert release in ids_of(listed), role
        else:
            assert_error(read, 401, "no access", f"release {release}")
            assert_error(listed, 401, "no access", f"project {project}")
        for response in (created, changed):
            if may_write[role]:
                assert response.status_code in (200, 201), (role, response.text)
            else:
                assert_error(response, 401, "release")
        if role == "TEST_RUNNER":
            assert_error(changed, 401, "TEST_RUNNER", "READ_WRITE", f"release {release}")


def test_releases_of_other_projects_do_not_leak(team: Team, admin: httpx.Client) -> None:
    """Read alone, another project's release is refused; listing another project is
    refused; a project's list holds and counts only its own."""
    other = new_project(admin)
    theirs = _new_release(admin, other)
    mine = _new_release(admin, team.project["id"])
    reader = team.clients["READ_ONLY"]
    assert_error(reader.get(f"/releases/{theirs}"), 401, "no access", f"release {theirs}")
    assert_error(reader.get("/releases", params={"project": other}), 401, "no access")
    listed = reader.get("/releases", params={"project": team.project["id"]})
    assert ids_of(listed) == [mine]
    assert total_of(listed) == 1
