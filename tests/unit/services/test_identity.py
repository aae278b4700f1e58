"""identity's rules, on a real SQLite database."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)
from plumbline.services.identity.models import outbox
from plumbline.services.identity.roles import Roles
from tests.unit.services.conftest import ADMIN, IdentityDomain, acting_as, identity_domain

USER = {
    "username": "Alice",
    "password": "s3cret",
    "first_name": "Alice",
    "last_name": "A",
    "email": "alice@example.com",
    "license_type": "NAMED",
}


@pytest.fixture
async def identity(identity_db: Database) -> IdentityDomain:
    return await identity_domain(identity_db)


async def _events(db: Database) -> list[str]:
    async with db.read() as session:
        rows = (await session.execute(select(outbox.c.body).order_by(outbox.c.id))).all()
    return [json.loads(r.body)["type"] for r in rows]


async def test_bootstrap_creates_one_admin_and_a_key(identity: IdentityDomain) -> None:
    await identity.auth.bootstrap("other-password")
    admin = await identity.auth.authenticate_basic("admin", "admin-pw")
    assert admin.is_admin
    with pytest.raises(Unauthenticated):
        await identity.auth.authenticate_basic("admin", "other-password")
    assert len(await identity.auth.token_keys()) == 1
    assert await _events(identity.auth.db) == ["identity.user.created"]


async def test_create_user_and_authenticate(identity: IdentityDomain) -> None:
    with acting_as(ADMIN):
        user_id = await identity.users.create_user(dict(USER))
    principal = await identity.auth.authenticate_basic("alice", "s3cret")  # case-insensitive name
    assert principal.user_id == user_id
    assert not principal.is_admin
    with pytest.raises(Unauthenticated):
        await identity.auth.authenticate_basic("alice", "wrong")
    with pytest.raises(Unauthenticated):
        await identity.auth.authenticate_basic("nobody", "s3cret")
    assert (await _events(identity.auth.db))[-1] == "identity.user.created"


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


async def test_an_unknown_user_costs_a_verification(identity: IdentityDomain) -> None:
    calls: list[str] = []
    original = identity.auth.passwords.verify

    async def counting(hashed: str, password: str) -> bool:
        calls.append(password)
        return await original(hashed, password)

    identity.auth.passwords.verify = counting  # type: ignore[method-assign]
    with pytest.raises(Unauthenticated, match="not correct"):
        await identity.auth.authenticate_basic("nobody", "guess")
    with pytest.raises(Unauthenticated, match="not correct"):
        await identity.auth.authenticate_basic("admin", "guess")
    assert calls == ["guess", "guess"]


async def test_deactivated_users_cannot_authenticate_or_exchange_tokens(
    identity: IdentityDomain,
) -> None:
    with acting_as(ADMIN):
        alice = await identity.users.create_user(dict(USER))
    with acting_as(Principal(alice, "Alice")):
        _id, client_id, secret = await identity.auth.create_client_credentials(alice, "ci")
    token = await identity.auth.issue_client_token(client_id, secret)
    assert identity.auth.verify_token(token.token) == alice
    with acting_as(ADMIN):
        await identity.users.set_user_active(alice, False)
        with pytest.raises(FailedPrecondition):
            await identity.users.set_user_active(ADMIN.user_id, False)
    with pytest.raises(Unauthenticated, match="inactive"):
        await identity.auth.authenticate_basic("alice", "s3cret")
    with pytest.raises(Unauthenticated, match="inactive"):
        await identity.auth.issue_client_token(client_id, secret)
    with pytest.raises(Unauthenticated):
        await identity.auth.issue_client_token(client_id, secret + "x")
    principal, active = await identity.auth.principal(alice)
    assert principal.username == "Alice"
    assert active is False


async def test_credentials_only_for_yourself(identity: IdentityDomain) -> None:
    with acting_as(ADMIN):
        alice = await identity.users.create_user(dict(USER))
    with acting_as(Principal(alice, "Alice")), pytest.raises(PermissionDenied):
        await identity.auth.create_client_credentials(ADMIN.user_id, "steal")
    with acting_as(ADMIN), pytest.raises(NotFound):
        await identity.auth.create_client_credentials(12345, "ghost")


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
    assert "identity.group.deleted" in await _events(identity.auth.db)


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
