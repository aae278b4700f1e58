"""Authentication and tokens: the first start's signing key and admin, credential
checks, the token exchanges and new client credentials."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TypeVar

import jwt
from sqlalchemy import select

from plumbline.common.context import ORG_ADMIN, SYSTEM, Principal, current_principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, insert_id
from plumbline.common.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
    Unauthenticated,
)
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.identity import store
from plumbline.services.identity.crypto import (
    Passwords,
    SigningKey,
    new_client_id,
    new_client_secret,
    token_claims,
)
from plumbline.services.identity.models import api_clients, signing_keys, users
from plumbline.services.identity.roles import parse_roles
from plumbline.services.identity.users import insert_user

log = logging.getLogger(__name__)

#: A row read for its secret's hash (a user's or a client's).
R = TypeVar("R")


@dataclass(frozen=True)
class IssuedToken:
    """An access token and what the token endpoint says about it."""

    token: str
    expires_in: int
    scope: str
    tenant: str
    jti: str


class Auth:
    """Credentials and tokens: who a caller is, and the tokens that say so."""

    def __init__(
        self, db: Database, outbox: Outbox, passwords: Passwords, token_ttl: int, tenant: str
    ) -> None:
        self.db = db
        self.outbox = outbox
        self.passwords = passwords
        self.token_ttl = token_ttl
        self.tenant = tenant
        self._key: SigningKey | None = None

    async def bootstrap(self, admin_password: str) -> bool:
        """Creates the signing key and the organization admin on first start; whether
        this start created the admin."""
        async with self.db.transaction() as session:
            row = (await session.execute(select(signing_keys).limit(1))).first()
            if row is None:
                key = SigningKey.generate()
                await session.execute(
                    signing_keys.insert().values(
                        kid=key.kid,
                        private_pem=key.private_pem,
                        public_pem=key.public_pem,
                        created_at=utcnow(),
                    )
                )
        async with self.db.read() as session:
            row = (await session.execute(select(signing_keys).limit(1))).first()
            assert row is not None
            self._key = SigningKey(row.kid, row.private_pem, row.public_pem)
            admin = await store.credentials_of(session, "admin")
        if admin is None:
            hashed = await self.passwords.hash(admin_password)
            try:
                await insert_user(
                    self.outbox,
                    {
                        "username": "admin",
                        "first_name": "Organization",
                        "last_name": "Admin",
                        "email": "admin@localhost",
                        "license_type": "NAMED",
                    },
                    hashed,
                    roles=ORG_ADMIN,
                    actor=SYSTEM,
                )
                log.info("created the organization admin 'admin'")
                return True
            except AlreadyExists:
                pass  # another replica created it first
        return False

    async def authenticate_basic(self, username: str, password: str) -> Principal:
        """The principal for a user name and password; inactive users are refused."""
        async with self.db.read() as session:
            row = await store.credentials_of(session, username)
        user = await self._verified(
            row, "password_hash", password, "The user name or password is not correct."
        )
        if not user.active:
            raise Unauthenticated(f"The user {user.username!r} is inactive.")
        return Principal(user.id, user.username, parse_roles(user.roles))

    async def _verified(self, row: R | None, hashed: str, secret: str, wrong: str) -> R:
        """``row`` once ``secret`` matches its ``hashed`` column, else ``Unauthenticated``
        with ``wrong``. No row (an unknown user name or client id) costs what a wrong
        secret costs, so the time does not tell which names exist."""
        if row is None:
            await self.passwords.verify_absent(secret)
            raise Unauthenticated(wrong)
        if not await self.passwords.verify(getattr(row, hashed), secret):
            raise Unauthenticated(wrong)
        return row

    async def principal(self, user_id: int) -> tuple[Principal, bool]:
        """The principal for a user id and whether the user is active."""
        async with self.db.read() as session:
            row = await store.user_or_missing(session, user_id)
        return Principal(row.id, row.username, parse_roles(row.roles)), bool(row.active)

    async def issue_client_token(self, client_id: str, secret: str) -> IssuedToken:
        """The client-credentials exchange."""
        async with self.db.read() as session:
            row = (
                await session.execute(
                    select(api_clients.c.secret_hash, api_clients.c.user_id, users.c.active)
                    .join(users, users.c.id == api_clients.c.user_id)
                    .where(api_clients.c.client_id == client_id, api_clients.c.revoked_at.is_(None))
                )
            ).first()
        client = await self._verified(
            row, "secret_hash", secret, "The client id or client secret is not correct."
        )
        if not client.active:
            raise Unauthenticated("The user of these client credentials is inactive.")
        return self._issue(client.user_id, client_id)

    async def issue_user_token(self, username: str, password: str) -> IssuedToken:
        """A token for a user who logged in with a password (the docs page's session)."""
        principal = await self.authenticate_basic(username, password)
        return self._issue(principal.user_id, None)

    async def issue_token_for(self, user_id: int) -> IssuedToken:
        """A token for an active user by id (a service acting as the user)."""
        _principal, active = await self.principal(user_id)
        if not active:
            raise FailedPrecondition(f"User {user_id} is inactive: no token is issued for them.")
        return self._issue(user_id, None)

    def _issue(self, user_id: int, client_id: str | None) -> IssuedToken:
        assert self._key is not None
        scope = "read write"
        claims = token_claims(user_id, client_id, self.token_ttl, scope, self.tenant)
        return IssuedToken(
            self._key.sign(claims), self.token_ttl, scope, self.tenant, str(claims["jti"])
        )

    async def token_keys(self) -> dict[str, str]:
        """Public keys by kid."""
        async with self.db.read() as session:
            rows = (
                await session.execute(select(signing_keys.c.kid, signing_keys.c.public_pem))
            ).all()
        return {row.kid: row.public_pem for row in rows}

    async def create_client_credentials(self, user_id: int, name: str) -> tuple[int, str, str]:
        """New client credentials for ``user_id``; returns (id, client id, secret)."""
        caller = current_principal() or SYSTEM
        if caller.user_id != user_id and not caller.is_admin:
            raise PermissionDenied("You may create API credentials only for yourself.")
        if not name.strip():
            raise InvalidArgument("name must not be empty")
        async with self.db.read() as session:
            await store.user_or_missing(session, user_id)
        client_id, secret = new_client_id(), new_client_secret()
        hashed = await self.passwords.hash(secret)
        async with self.outbox.transaction() as session:
            new_id = await insert_id(
                session,
                api_clients.insert().values(
                    client_id=client_id,
                    secret_hash=hashed,
                    name=name.strip(),
                    user_id=user_id,
                    created_at=utcnow(),
                ),
            )
            await self.outbox.add(
                session,
                Event(
                    "identity.apiclient.created",
                    actor=caller.user_id,
                    object_ids=[new_id],
                    payload={"user": user_id, "name": name.strip(), "clientId": client_id},
                ),
            )
        return new_id, client_id, secret

    def verify_token(self, token: str) -> int:
        """The user id of a valid token (used by the CLI and tests)."""
        assert self._key is not None
        claims = jwt.decode(token, self._key.public_pem, algorithms=["EdDSA"], issuer="plumbline")
        return int(claims["sub"])
