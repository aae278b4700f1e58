"""The contract's rules for users and user groups, as project access shapes them.

``GET /users`` and ``GET /usergroups`` need an organisation (or user) administrator, or a
``project`` the caller administers: then they list the users with a role on it, or the
project's groups. ``GET /users/{id}`` needs a shared project, a shared group, or oneself;
``GET /usergroups/{id}`` needs membership or READ on the group's project.
"""

from __future__ import annotations

import httpx

from tests.e2e.api import (
    MATRIX_ROLES,
    MakeUser,
    Team,
    assert_answers,
    assert_error,
    created_id,
    eventually,
    grant,
    ids_of,
    new_project,
    total_of,
    unique,
)


def test_listing_users_and_groups_by_role(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    group = created_id(admin.post("/usergroups", json={"name": unique("G "), "project": project}))
    may_list = team.expect("PROJECT_ADMIN")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        of_project = {
            "users": client.get("/users", params={"project": project, "maxResults": 50}),
            "groups": client.get("/usergroups", params={"project": project}),
        }
        assert_answers(of_project, may_list[role], role, f"project {project}")
        everyone = {"users": client.get("/users"), "groups": client.get("/usergroups")}
        assert_answers(everyone, role == "ORG_ADMIN", role, "administrators")
        if may_list[role]:
            assert group in ids_of(of_project["groups"]), role
    owner = team.clients["PROJECT_ADMIN"]
    listed = owner.get("/users", params={"project": project, "maxResults": 50})
    # The organisation admin created the project, and so became one of its admins.
    members = {team.ids[r] for r in MATRIX_ROLES if r != "NONE"}
    assert set(ids_of(listed)) == members
    assert total_of(listed) == len(members)
    # The same filters as ever, within the project's users.
    reader = owner.get(f"/users/{team.ids['READ_ONLY']}").json()["data"]["username"]
    filtered = owner.get("/users", params={"project": project, "username": reader})
    assert ids_of(filtered) == [team.ids["READ_ONLY"]]
    # A project the caller does not administer.
    other = new_project(admin)
    assert_error(owner.get("/users", params={"project": other}), 401, f"project {other}")
    assert_error(owner.get("/usergroups", params={"project": other}), 401, f"project {other}")


def test_reading_a_user_needs_a_shared_project(
    team: Team, admin: httpx.Client, make_user: MakeUser
) -> None:
    stranger, _n, _p, stranger_client = make_user()
    reader = team.clients["READ_ONLY"]
    writer = team.ids["READ_WRITE"]
    assert reader.get(f"/users/{writer}").status_code == 200  # both have a role on it
    assert reader.get(f"/users/{team.ids['READ_ONLY']}").status_code == 200  # oneself
    assert_error(reader.get(f"/users/{team.ids['NONE']}"), 401, str(team.ids["NONE"]))
    assert_error(reader.get(f"/users/{stranger}"), 401, str(stranger))
    assert_error(stranger_client.get(f"/users/{writer}"), 401, str(writer))
    # A role on another project shared with the stranger.
    other = new_project(admin)
    grant(admin, other, "READ_ONLY", user=stranger)
    assert_error(reader.get(f"/users/{stranger}"), 401)
    grant(admin, other, "READ_ONLY", user=team.ids["READ_ONLY"])
    assert reader.get(f"/users/{stranger}").status_code == 200
    assert stranger_client.get(f"/users/{team.ids['READ_ONLY']}").status_code == 200


def test_reading_a_group_needs_membership_or_its_project(
    team: Team, admin: httpx.Client, make_user: MakeUser
) -> None:
    project = team.project["id"]
    of_project = created_id(
        admin.post("/usergroups", json={"name": unique("P "), "project": project})
    )
    organisation = created_id(admin.post("/usergroups", json={"name": unique("O ")}))
    may_read = team.expect("READ_ONLY")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        assert_answers(
            {"project group": client.get(f"/usergroups/{of_project}")},
            may_read[role],
            role,
            f"user group {of_project}",
        )
        assert_answers(
            {"organisation group": client.get(f"/usergroups/{organisation}")},
            role == "ORG_ADMIN",
            role,
            f"user group {organisation}",
        )
    member, _n, _p, member_client = make_user()
    assert admin.post(f"/usergroups/{organisation}/users", json={"user": member}).status_code == 201
    assert member_client.get(f"/usergroups/{organisation}").status_code == 200
    assert_error(member_client.get(f"/usergroups/{of_project}"), 401)


def test_user_admins_list_and_read_users_but_not_projects(
    team: Team, admin: httpx.Client, labs: httpx.Client, make_user: MakeUser
) -> None:
    user_id, _name, _pw, client = make_user()
    given = labs.put(f"/users/{user_id}/roles", json={"roles": ["USER_ADMIN"]})
    assert given.status_code == 200, given.text

    def lists_users() -> bool:
        return client.get("/users").status_code == 200

    assert eventually(lists_users)  # the gateway's principal cache hears the change
    outsider = admin.get(f"/users/{team.ids['NONE']}").json()["data"]["username"]
    assert ids_of(client.get("/users", params={"username": outsider})) == [team.ids["NONE"]]
    assert client.get(f"/users/{team.ids['READ_ONLY']}").status_code == 200
    assert client.get("/usergroups").status_code == 200
    # Managing users gives no access to any project's records.
    assert_error(client.get(f"/projects/{team.project['id']}"), 401, "no access")
