"""identity's authentication: the bootstrap admin, passwords, client credentials and
tokens, on a real SQLite database."""

from __future__ import annotations

import pytest

from plumbline.common.context import Principal
from plumbline.common.errors import (
    FailedPrecondition,
    NotFound,
    PermissionDenied,
    Unauthenticated,
)
from tests.unit.services.conftest import ADMIN, IdentityDomain, acting_as
from tests.unit.services.identity.conftest import USER, event_types


async def test_bootstrap_creates_one_admin_and_a_key(identity: IdentityDomain) -> None:
    await identity.auth.bootstrap("other-password")
    admin = await identity.auth.authenticate_basic("admin", "admin-pw")
    assert admin.is_admin
    with pytest.raises(Unauthenticated):
        await identity.auth.authenticate_basic("admin", "other-password")
    assert len(await identity.auth.token_keys()) == 1
    assert await event_types(identity.auth.db) == ["identity.user.created"]


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
    assert (await event_types(identity.auth.db))[-1] == "identity.user.created"


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


async def test_a_service_gets_a_token_for_an_active_user_by_id(
    identity: IdentityDomain,
) -> None:
    """For hooks, which reads a changed record through the API as a webhook's owner."""
    with acting_as(ADMIN):
        alice = await identity.users.create_user(dict(USER))
    token = await identity.auth.issue_token_for(alice)
    assert identity.auth.verify_token(token.token) == alice
    with acting_as(ADMIN):
        await identity.users.set_user_active(alice, False)
    with pytest.raises(FailedPrecondition, match="inactive"):
        await identity.auth.issue_token_for(alice)
    with pytest.raises(NotFound):
        await identity.auth.issue_token_for(999_999)


async def test_credentials_only_for_yourself(identity: IdentityDomain) -> None:
    with acting_as(ADMIN):
        alice = await identity.users.create_user(dict(USER))
    with acting_as(Principal(alice, "Alice")), pytest.raises(PermissionDenied):
        await identity.auth.create_client_credentials(ADMIN.user_id, "steal")
    with acting_as(ADMIN), pytest.raises(NotFound):
        await identity.auth.create_client_credentials(12345, "ghost")
