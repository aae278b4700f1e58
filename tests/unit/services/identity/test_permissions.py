"""identity's permission entries and what they add up to for one user."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from plumbline.common.access import Role
from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, NotFound, PermissionDenied
from plumbline.services.identity.models import outbox
from plumbline.services.identity.permissions import Entry, Permissions
from tests.unit.services.conftest import ADMIN, IdentityDomain, acting_as, identity_domain

# A folder 10 holding folder 11 (holding project 12) and project 13; project 14 apart.
TREE = [(10, None, True), (11, 10, True), (12, 11, False), (13, 10, False), (14, None, False)]


@pytest.fixture
async def world(identity_db: Database) -> tuple[IdentityDomain, Permissions, dict[str, int]]:
    identity = await identity_domain(identity_db)
    permissions = identity.permissions
    await permissions.place(TREE, complete=True)
    people: dict[str, int] = {}
    with acting_as(ADMIN):
        for name in ("ann", "bob", "cy"):
            people[name] = await identity.users.create_user(
                {
                    "username": name,
                    "password": "pw",
                    "first_name": name,
                    "last_name": "x",
                    "email": f"{name}@example.com",
                    "license_type": "NAMED",
                }
            )
        people["team"] = await identity.groups.create_group("team", "", None)
        await identity.groups.add_member(people["team"], people["bob"])
    return identity, permissions, people


async def _event_types(db: Database) -> list[str]:
    async with db.read() as session:
        bodies = (await session.scalars(select(outbox.c.body))).all()
    return [b.split('"type":"', 1)[1].split('"', 1)[0] for b in bodies]


async def test_folder_entries_reach_every_project_inside(
    world: tuple[IdentityDomain, Permissions, dict[str, int]],
) -> None:
    _identity, permissions, people = world
    with acting_as(ADMIN):
        await permissions.update(10, [Entry(people["ann"], None, Role.READ_ONLY)])
        await permissions.update(12, [Entry(people["ann"], None, Role.READ_WRITE)])
    roles = await permissions.roles_of(people["ann"])
    assert roles == {
        10: Role.READ_ONLY,
        11: Role.READ_ONLY,
        12: Role.READ_WRITE,  # the stronger of the folder's and its own
        13: Role.READ_ONLY,
    }


async def test_group_entries_reach_members_only(
    world: tuple[IdentityDomain, Permissions, dict[str, int]],
) -> None:
    identity, permissions, people = world
    with acting_as(ADMIN):
        await permissions.update(14, [Entry(None, people["team"], Role.TEST_RUNNER)])
    assert await permissions.roles_of(people["bob"]) == {14: Role.TEST_RUNNER}
    assert await permissions.roles_of(people["cy"]) == {}
    assert await permissions.members_of(14) == {people["bob"]}
    with acting_as(ADMIN):
        await identity.groups.remove_member(people["team"], people["bob"])
    assert await permissions.roles_of(people["bob"]) == {}


async def test_moving_a_project_out_of_a_folder_takes_the_folders_role_away(
    world: tuple[IdentityDomain, Permissions, dict[str, int]],
) -> None:
    _identity, permissions, people = world
    with acting_as(ADMIN):
        await permissions.update(10, [Entry(people["ann"], None, Role.READ_ONLY)])
    await permissions.place([(13, None, False)], complete=False)
    assert 13 not in await permissions.roles_of(people["ann"])


async def test_only_project_admins_manage_entries(
    world: tuple[IdentityDomain, Permissions, dict[str, int]], identity_db: Database
) -> None:
    _identity, permissions, people = world
    ann = Principal(people["ann"], "ann")
    with acting_as(ADMIN):
        await permissions.update(12, [Entry(people["ann"], None, Role.READ_WRITE)])
    with acting_as(ann), pytest.raises(PermissionDenied, match="READ_WRITE"):
        await permissions.update(12, [Entry(people["cy"], None, Role.READ_ONLY)])
    with acting_as(ADMIN):
        await permissions.update(11, [Entry(people["ann"], None, Role.PROJECT_ADMIN)])
    with acting_as(ann):  # admin of folder 11, so of project 12 inside it
        rows = await permissions.update(12, [Entry(people["cy"], None, Role.READ_ONLY)])
    assert {(r.user_id, r.role) for r in rows} == {
        (people["ann"], "READ_WRITE"),
        (people["cy"], "READ_ONLY"),
    }
    assert (await _event_types(identity_db)).count("identity.permission.created") == 3


async def test_replace_removes_the_rest_and_delete_needs_an_entry(
    world: tuple[IdentityDomain, Permissions, dict[str, int]], identity_db: Database
) -> None:
    _identity, permissions, people = world
    with acting_as(ADMIN):
        await permissions.update(14, [Entry(people["ann"], None, Role.READ_ONLY)])
        rows = await permissions.replace(14, [Entry(people["cy"], None, Role.READ_ONLY)])
        assert [r.user_id for r in rows] == [people["cy"]]
        with pytest.raises(NotFound, match="user"):
            await permissions.delete(14, [Entry(people["ann"], None, None)])
        await permissions.delete(14, [Entry(people["cy"], None, None)])
        assert await permissions.entries_of(14) == []
        with pytest.raises(InvalidArgument, match="more than once"):
            await permissions.update(
                14,
                [
                    Entry(people["ann"], None, Role.READ_ONLY),
                    Entry(people["ann"], None, Role.READ_ONLY),
                ],
            )
        with pytest.raises(InvalidArgument, match="no user with id 999"):
            await permissions.update(14, [Entry(999, None, Role.READ_ONLY)])
        with pytest.raises(NotFound, match="No project or project folder with id 99"):
            await permissions.entries_of(99)
    assert "identity.permission.deleted" in await _event_types(identity_db)


async def test_the_creator_becomes_admin_of_a_new_project_only(
    world: tuple[IdentityDomain, Permissions, dict[str, int]],
) -> None:
    _identity, permissions, people = world
    ann = Principal(people["ann"], "ann")
    await permissions.place([(15, 10, False)], complete=False)
    with acting_as(ann):
        await permissions.grant_creator(15)
        assert (await permissions.roles_of(people["ann"]))[15] is Role.PROJECT_ADMIN
    with acting_as(Principal(people["cy"], "cy")), pytest.raises(PermissionDenied):
        await permissions.grant_creator(15)  # it has an entry now: nobody else claims it


async def test_project_admins_list_their_projects_users(
    world: tuple[IdentityDomain, Permissions, dict[str, int]],
) -> None:
    identity, permissions, people = world
    ann = Principal(people["ann"], "ann")
    with acting_as(ADMIN):
        await permissions.update(14, [Entry(people["ann"], None, Role.PROJECT_ADMIN)])
        await permissions.update(14, [Entry(None, people["team"], Role.READ_ONLY)])
    with acting_as(ann):
        rows, total = await identity.users.list_users(project=14)
        assert {r.id for r in rows} == {people["ann"], people["bob"]}
        assert total == 2
        with pytest.raises(PermissionDenied, match="administrators"):
            await identity.users.list_users()
        with pytest.raises(PermissionDenied, match="project 12"):
            await identity.users.list_users(project=12)
        assert (await identity.users.get_user(people["bob"])).id == people["bob"]  # shared project
        with pytest.raises(PermissionDenied):
            await identity.users.get_user(people["cy"])
