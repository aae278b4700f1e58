"""Password hashing, client secrets and signed access tokens."""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from dataclasses import dataclass

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ISSUER = "plumbline"


class Passwords:
    """Argon2id hashing, run off the event loop (it is deliberately slow)."""

    def __init__(self, time_cost: int, memory_cost: int) -> None:
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_cost)
        self._absent: str | None = None

    async def hash(self, password: str) -> str:
        """A new salted hash."""
        return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, hashed: str, password: str) -> bool:
        """Whether ``password`` matches; never raises for a mismatch."""
        try:
            return await asyncio.to_thread(self._hasher.verify, hashed, password)
        except (VerificationError, InvalidHashError):
            return False

    async def verify_absent(self, password: str) -> bool:
        """Spends the time of a verification where there is no hash to verify against
        (an unknown user name), so that the answer's timing reveals nothing; False."""
        if self._absent is None:
            self._absent = await self.hash(secrets.token_urlsafe(16))
        await self.verify(self._absent, password)
        return False


def new_client_id() -> str:
    """A client id: not secret, unique."""
    return "pl_" + secrets.token_hex(12)


def new_client_secret() -> str:
    """A client secret: shown once, stored hashed."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class SigningKey:
    """An Ed25519 key pair; tokens name it in their ``kid`` header."""

    kid: str
    private_pem: str
    public_pem: str

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh key pair."""
        private = Ed25519PrivateKey.generate()
        private_pem = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        public_pem = (
            private.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
        return cls(kid=uuid.uuid4().hex, private_pem=private_pem, public_pem=public_pem)

    def sign(self, claims: dict[str, object]) -> str:
        """A compact JWS (EdDSA)."""
        return jwt.encode(claims, self.private_pem, algorithm="EdDSA", headers={"kid": self.kid})


def token_claims(
    user_id: int, client_id: str | None, ttl: int, scope: str, tenant: str
) -> dict[str, object]:
    """Claims of an access token."""
    now = int(time.time())
    claims: dict[str, object] = {
        "iss": ISSUER,
        "sub": str(user_id),
        "iat": now,
        "exp": now + ttl,
        "jti": uuid.uuid4().hex,
        "scope": scope,
        "tenant": tenant,
    }
    if client_id:
        claims["client_id"] = client_id
    return claims
