"""The gateway's credential cache."""

from __future__ import annotations

import base64
from typing import cast

import pytest

from plumbline.api.identity.v1 import identity_pb2, identity_pb2_grpc
from plumbline.common.errors import Unauthenticated
from plumbline.common.events import Event
from plumbline.gateway.auth import Authenticator, decode_basic
from plumbline.services.identity.crypto import SigningKey, token_claims


class FakeIdentity:
    """identity's Auth stub without a server: counts calls; knows one user."""

    def __init__(self) -> None:
        self.calls = 0

    async def AuthenticateBasic(
        self, request: identity_pb2.BasicCredentials
    ) -> identity_pb2.Principal:
        self.calls += 1
        if (request.username, request.password) != ("alice", "pw"):
            raise Unauthenticated("The user name or password is not correct.")
        return identity_pb2.Principal(user_id=7, username="alice", roles=[], active=True)


def _stub(fake: FakeIdentity) -> identity_pb2_grpc.AuthAsyncStub:
    # The authenticator calls AuthenticateBasic only, which the fake answers alike.
    return cast("identity_pb2_grpc.AuthAsyncStub", fake)


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


async def test_a_verified_credential_is_cached_until_the_user_changes() -> None:
    identity = FakeIdentity()
    auth = Authenticator(_stub(identity), ttl=60)
    for _ in range(3):
        assert (await auth.basic(_basic("alice", "pw"))).user_id == 7
    assert identity.calls == 1
    await auth.on_event(Event("identity.user.updated", actor=1, object_ids=[7]))
    await auth.basic(_basic("alice", "pw"))
    assert identity.calls == 2


async def test_failures_are_never_cached() -> None:
    identity = FakeIdentity()
    auth = Authenticator(_stub(identity), ttl=60)
    for _ in range(2):
        with pytest.raises(Unauthenticated):
            await auth.basic(_basic("alice", "wrong"))
    assert identity.calls == 2


async def test_expired_entries_are_verified_again() -> None:
    identity = FakeIdentity()
    auth = Authenticator(_stub(identity), ttl=0)
    await auth.basic(_basic("alice", "pw"))
    await auth.basic(_basic("alice", "pw"))
    assert identity.calls == 2


@pytest.mark.parametrize(
    "encoded", ["!!!", base64.b64encode(b"nocolon").decode(), base64.b64encode(b":pw").decode()]
)
def test_malformed_basic_credentials(encoded: str) -> None:
    with pytest.raises(Unauthenticated):
        decode_basic(encoded)


def test_passwords_may_contain_colons() -> None:
    assert decode_basic(_basic("bob", "a:b:c")) == ("bob", "a:b:c")


class TokenIdentity:
    """identity's Auth and Credentials stubs for bearer tokens: one key, one user."""

    def __init__(self, revoked: list[str]) -> None:
        self.key = SigningKey.generate()
        self.revoked = revoked

    def token(self, client_id: str) -> str:
        return self.key.sign(token_claims(7, client_id, 60, "read write", "t"))

    async def GetTokenKeys(self, request: object) -> identity_pb2.TokenKeys:
        return identity_pb2.TokenKeys(public_keys={self.key.kid: self.key.public_pem})

    async def GetPrincipal(self, request: object) -> identity_pb2.Principal:
        return identity_pb2.Principal(user_id=7, username="alice", active=True)

    async def ListRevokedClients(self, request: object) -> identity_pb2.RevokedClients:
        return identity_pb2.RevokedClients(client_ids=self.revoked)


async def test_tokens_of_revoked_clients_are_refused_without_a_call() -> None:
    identity = TokenIdentity(revoked=["old"])
    auth = Authenticator(cast("identity_pb2_grpc.AuthAsyncStub", identity), ttl=60)
    credentials = cast("identity_pb2_grpc.CredentialsAsyncStub", identity)
    await auth.load_keys()
    await auth.load_revoked(credentials)
    with pytest.raises(Unauthenticated, match="revoked"):
        await auth.bearer(identity.token("old"))
    assert (await auth.bearer(identity.token("new"))).user_id == 7
    event = Event("identity.apiclient.revoked", actor=7, payload={"clientId": "new"})
    await auth.on_revoked(event)
    with pytest.raises(Unauthenticated, match="revoked"):
        await auth.bearer(identity.token("new"))
    # A reload whose query ran before the revocation committed does not forget it.
    await auth.load_revoked(credentials)
    with pytest.raises(Unauthenticated, match="revoked"):
        await auth.bearer(identity.token("new"))
