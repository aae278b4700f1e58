"""Authentication: Basic, Bearer tokens, and the docs page's session cookie.

A password is hashed once: a verified Basic credential is cached under a keyed digest
(HMAC with a per-process key, so the cache never holds a password) for a short TTL and
dropped when the user changes. Tokens are verified locally with identity's public keys;
the user behind a token is looked up once per TTL, so deactivation takes effect.
Tokens of revoked API credentials are refused: the gateway keeps the recently revoked
client ids, loaded at start, learned from ``identity.apiclient.revoked`` events and
reloaded now and then in case an event was missed, so no request waits for a call.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import time

import jwt
from starlette.requests import Request

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2, identity_pb2_grpc
from plumbline.common.context import Principal, principal_var
from plumbline.common.errors import NotFound, Unauthenticated
from plumbline.common.events import Event
from plumbline.gateway.logins import LoginGuard, Logins

SESSION_COOKIE = "plumbline_session"
_MAX_ENTRIES = 100_000
#: How long a revocation learned from an event is kept over a reload that lacks it (the
#: reload's query may have run before the revocation committed).
_REVOKED_GRACE = 120.0


class Authenticator:
    """Turns request credentials into a principal."""

    def __init__(
        self,
        identity: identity_pb2_grpc.AuthAsyncStub,
        ttl: float,
        logins: Logins | None = None,
    ) -> None:
        self.identity = identity
        self.ttl = ttl
        self.logins: Logins = logins or LoginGuard()
        self._key = os.urandom(32)
        self._basic: dict[bytes, tuple[Principal, float]] = {}
        self._basic_by_user: dict[int, set[bytes]] = {}
        self._users: dict[int, tuple[Principal | None, float]] = {}
        self._public_keys: dict[str, str] = {}
        self._revoked: dict[str, float] = {}

    async def load_keys(self) -> None:
        """Fetches identity's token keys."""
        reply = await self.identity.GetTokenKeys(core_pb2.Empty())
        self._public_keys = dict(reply.public_keys)

    async def load_revoked(self, credentials: identity_pb2_grpc.CredentialsAsyncStub) -> None:
        """Fetches the recently revoked client ids (at start, then now and then)."""
        reply = await credentials.ListRevokedClients(core_pb2.Empty())
        now = time.monotonic()
        kept = {c: t for c, t in self._revoked.items() if t > now - _REVOKED_GRACE}
        self._revoked = {**dict.fromkeys(reply.client_ids, now - _REVOKED_GRACE), **kept}

    async def on_revoked(self, event: Event) -> None:
        """Bus handler for ``identity.apiclient.revoked``."""
        client_id = event.payload.get("clientId")
        if isinstance(client_id, str):
            self._revoked[client_id] = time.monotonic()

    def forget_user(self, user_id: int) -> None:
        """Drops everything cached for a user."""
        for digest in self._basic_by_user.pop(user_id, set()):
            self._basic.pop(digest, None)
        self._users.pop(user_id, None)

    async def on_event(self, event: Event) -> None:
        """Bus handler for ``identity.user.*``."""
        for user_id in event.object_ids:
            self.forget_user(int(user_id))

    async def authenticate(self, request: Request) -> Principal:
        """The principal of a request, or ``Unauthenticated``."""
        header = request.headers.get("authorization")
        if header:
            scheme, _, value = header.partition(" ")
            scheme = scheme.lower()
            if scheme == "basic":
                return await self.basic(value.strip(), client_address(request))
            if scheme == "bearer":
                return await self.bearer(value.strip())
            raise Unauthenticated("Use Basic or Bearer authentication.")
        cookie = request.cookies.get(SESSION_COOKIE)
        if cookie:
            return await self.bearer(cookie)
        raise Unauthenticated("Authentication is required: use Basic or Bearer credentials.")

    async def basic(self, encoded: str, address: str = "") -> Principal:
        """Basic credentials, verified once per TTL; failures are counted per user name and
        per client ``address`` (``LoginGuard``), cached successes are not."""
        digest = hmac.new(self._key, encoded.encode(), hashlib.sha256).digest()
        now = time.monotonic()
        cached = self._basic.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        username, password = decode_basic(encoded)
        credentials = identity_pb2.BasicCredentials(username=username, password=password)
        reply = await self.logins.attempt(
            username, address, lambda: self.identity.AuthenticateBasic(credentials)
        )
        principal = Principal(reply.user_id, reply.username, frozenset(reply.roles))
        if len(self._basic) > _MAX_ENTRIES:
            self._basic.clear()
            self._basic_by_user.clear()
        self._basic[digest] = (principal, now + self.ttl)
        self._basic_by_user.setdefault(principal.user_id, set()).add(digest)
        return principal

    async def bearer(self, token: str) -> Principal:
        """A signed token; the user must still be active."""
        try:
            kid = jwt.get_unverified_header(token).get("kid", "")
        except jwt.PyJWTError:
            raise Unauthenticated("The access token is malformed.") from None
        if kid not in self._public_keys:
            await self.load_keys()
        key = self._public_keys.get(kid)
        if key is None:
            raise Unauthenticated("The access token was not issued by this server.")
        try:
            claims = jwt.decode(token, key, algorithms=["EdDSA"], issuer="plumbline")
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("The access token has expired; request a new one.") from None
        except jwt.PyJWTError:
            raise Unauthenticated("The access token is not valid.") from None
        if claims.get("client_id") in self._revoked:
            raise Unauthenticated(
                "The API credentials this access token was issued to are revoked."
            )
        return await self.user(int(claims["sub"]))

    async def user(self, user_id: int) -> Principal:
        """The principal of a user id, cached for the TTL."""
        now = time.monotonic()
        cached = self._users.get(user_id)
        if cached is None or cached[1] <= now:
            try:
                reply = await self.identity.GetPrincipal(core_pb2.Id(id=user_id))
                principal = (
                    Principal(reply.user_id, reply.username, frozenset(reply.roles))
                    if reply.active
                    else None
                )
            except NotFound:
                principal = None
            if len(self._users) > _MAX_ENTRIES:
                self._users.clear()
            cached = (principal, now + self.ttl)
            self._users[user_id] = cached
        if cached[0] is None:
            raise Unauthenticated("The user of this token is inactive or no longer exists.")
        return cached[0]


def client_address(request: Request) -> str:
    """The client's address (behind a proxy listed in ``FORWARDED_ALLOW_IPS``, the one it
    forwarded)."""
    return request.client.host if request.client is not None else ""


def challenge(request: Request) -> dict[str, str]:
    """The ``WWW-Authenticate`` header every 401 carries (RFC 9110).

    The documentation page calls the API with its session cookie: offering Basic there
    would make the browser open its own login dialog, so that caller is offered Bearer.
    """
    if not request.headers.get("authorization") and request.cookies.get(SESSION_COOKIE):
        return {"WWW-Authenticate": 'Bearer realm="plumbline"'}
    return {"WWW-Authenticate": 'Basic realm="plumbline", Bearer realm="plumbline"'}


async def caller(request: Request) -> Principal:
    """Dependency: authenticates the request and makes the caller current for gRPC calls.

    The middleware has usually verified the credentials already (before routing).
    """
    principal: Principal | None = getattr(request.state, "principal", None)
    if principal is None:
        authenticator: Authenticator = request.app.state.gateway.auth
        principal = await authenticator.authenticate(request)
    principal_var.set(principal)
    return principal


def decode_basic(encoded: str) -> tuple[str, str]:
    """user and password of a Basic credential."""
    try:
        text = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise Unauthenticated(
            "The Basic credentials are not valid base64 of user:password."
        ) from None
    username, sep, password = text.partition(":")
    if not sep or not username:
        raise Unauthenticated("The Basic credentials must be user:password.")
    return username, password
