"""identity's user groups and their members, on a real SQLite database."""

from __future__ import annotations

import pytest

from plumbline.common.context import Principal
from plumbline.common.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from tests.unit.services.conftest import ADMIN, IdentityDomain, acting_as
from tests.unit.services.identity.conftest import USER, event_types


async def test_groups_and_members(identity: IdentityDomain) -> None:
    with acting_as(ADMIN):
        alice = await identity.users.create_user(dict(USER))
        bob = await identity.users.create_user(dict(USER, username="bob", email="b@example.com"))
        group = await identity.groups.create_group("Reviewers", "", None)
        with pytest.raises(AlreadyExists):
            await identity.groups.create_group("Reviewers", "", None)
        assert await identity.groups.create_group("Reviewers", "", 7) != group  # other scope
        await identity.groups.add_member(group, alice)
        await identity.groups.add_member(group, bob)
        with pytest.raises(AlreadyExists):
            await identity.groups.add_member(group, alice)
        with pytest.raises(InvalidArgument):
            await identity.groups.add_member(group, 999)
        rows, total = await identity.groups.group_members(group, 0, 20)
        assert total == 2
        assert [r.id for r in rows] == [alice, bob]
    with acting_as(Principal(alice, "Alice")):
        assert (await identity.users.get_user(bob)).username == "bob"  # shares a group
        assert (await identity.groups.get_group(group)).name == "Reviewers"
        with pytest.raises(PermissionDenied):
            await identity.groups.list_groups(None, 0, 20)
    with acting_as(ADMIN):
        await identity.groups.remove_member(group, bob)
        with pytest.raises(NotFound):
            await identity.groups.remove_member(group, bob)
        await identity.groups.delete_group(group)
        with pytest.raises(NotFound):
            await identity.groups.get_group(group)
    assert "identity.group.deleted" in await event_types(identity.auth.db)
