"""identity's users: the rules for creating, changing, listing and finding them, on a real
SQLite database."""

from __future__ import annotations

import pytest

from plumbline.common.context import Principal
from plumbline.common.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from plumbline.services.identity.roles import Roles
from tests.unit.services.conftest import ADMIN, IdentityDomain, acting_as
from tests.unit.services.identity.conftest import USER


async def test_create_user_rules(identity: IdentityDomain) -> None:
    with acting_as(ADMIN):
        await identity.users.create_user(dict(USER))
        with pytest.raises(AlreadyExists, match="already exists"):
            await identity.users.create_user(dict(USER, username="ALICE"))
        with pytest.raises(InvalidArgument, match="email"):
            await identity.users.create_user(
                {k: v for k, v in USER.items() if k != "email"} | {"username": "b"}
            )
    with acting_as(Principal(99, "someone")), pytest.raises(PermissionDenied):
        await identity.users.create_user(dict(USER, username="c"))
    with acting_as(None), pytest.raises(PermissionDenied):
        await identity.users.create_user(dict(USER, username="d"))


async def test_users_change_themselves_but_not_others(identity: IdentityDomain) -> None:
    with acting_as(ADMIN):
        alice = await identity.users.create_user(dict(USER))
        bob = await identity.users.create_user(dict(USER, username="bob", email="b@example.com"))
    with acting_as(Principal(alice, "Alice")):
        await identity.users.update_user(alice, {"title": "Lead"})
        assert (await identity.users.get_user(alice)).title == "Lead"
        with pytest.raises(PermissionDenied):
            await identity.users.update_user(bob, {"title": "x"})
        with pytest.raises(PermissionDenied):
            await identity.users.get_user(bob)
        with pytest.raises(InvalidArgument, match="password"):
            await identity.users.update_user(alice, {"password": "new"})


async def test_user_names_are_checked(identity: IdentityDomain) -> None:
    with acting_as(ADMIN):
        for name in ("a:b", "line\nbreak", "tab\tx", " lead", "trail ", "bell\x07"):
            with pytest.raises(InvalidArgument, match="except ':'"):
                await identity.users.create_user(dict(USER, username=name))
        alice = await identity.users.create_user(dict(USER, username="Alice Smith-Ünal.x@y"))
        with pytest.raises(InvalidArgument, match="except ':'"):
            await identity.users.update_user(alice, {"username": "al:ice"})


async def test_only_administrators_change_the_licence_type(identity: IdentityDomain) -> None:
    with acting_as(ADMIN):
        alice = await identity.users.create_user(dict(USER))
    with acting_as(Principal(alice, "Alice")):
        await identity.users.update_user(alice, {"license_type": "NAMED", "title": "Lead"})
        with pytest.raises(PermissionDenied, match="licenseType"):
            await identity.users.update_user(alice, {"license_type": "FLOATING"})
    with acting_as(ADMIN):
        await identity.users.update_user(alice, {"license_type": "FLOATING"})
        assert (await identity.users.get_user(alice)).license_type == "FLOATING"


async def test_list_users_filters_and_pages(identity: IdentityDomain) -> None:
    with acting_as(ADMIN):
        ids = [
            await identity.users.create_user(
                dict(USER, username=f"u{i}", email=f"u{i}@example.com")
            )
            for i in range(5)
        ]
        await identity.users.set_user_active(ids[0], False)
        rows, total = await identity.users.list_users(start_at=1, max_results=2)
        assert total == 5  # admin + four active
        assert len(rows) == 2
        rows, total = await identity.users.list_users(usernames=["U1", "u2"])
        assert total == 2
        rows, total = await identity.users.list_users(usernames=["u0"])
        assert total == 0
        rows, total = await identity.users.list_users(usernames=["u0"], include_inactive=True)
        assert total == 1


async def test_unknown_users_and_groups_are_named_in_not_found(identity: IdentityDomain) -> None:
    roles = Roles(identity.auth.db, identity.auth.outbox)
    with acting_as(ADMIN):
        group = await identity.groups.create_group("Reviewers", "", None)
        for call in (
            identity.auth.principal(404),
            identity.auth.create_client_credentials(404, "ci"),
            identity.users.get_user(404),
            identity.users.update_user(404, {"title": "x"}),
            identity.users.set_user_active(404, False),
            roles.get(404),
            roles.set(404, []),
        ):
            with pytest.raises(NotFound) as raised:
                await call
            assert str(raised.value) == "No user with id 404."
        for call in (
            identity.groups.get_group(405),
            identity.groups.update_group(405, {"name": "x"}),
            identity.groups.delete_group(405),
            identity.groups.add_member(405, ADMIN.user_id),
            identity.groups.remove_member(405, ADMIN.user_id),
        ):
            with pytest.raises(NotFound) as raised:
                await call
            assert str(raised.value) == "No user group with id 405."
        with pytest.raises(InvalidArgument, match=r"^No user with id 404\.$"):
            await identity.groups.add_member(group, 404)
