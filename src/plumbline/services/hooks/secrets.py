"""Webhook secrets: made, sealed for the database, and used to sign deliveries.

A secret is ``whsec_`` and 32 random bytes in base64, as the Standard Webhooks
specification has it; the receiver verifies a delivery with it. The hooks database holds
it sealed (AES-256-GCM with a key from ``PLUMBLINE_WEBHOOKS_KEY``), so a copy of the
database alone does not give it away; the laptop default, with no key set, makes a key
file in the data directory once and uses it from then on.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import os
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

log = logging.getLogger(__name__)

PREFIX = "whsec_"
#: What a sealed secret starts with: the sealing scheme, so another can follow.
SEALED = "v1."
#: Bound to every sealed secret: a value sealed for something else does not open here.
_PURPOSE = b"plumbline webhook secret"
KEY_FILE = "webhooks.key"


def new_secret() -> str:
    """A fresh signing secret: ``whsec_`` and 32 random bytes in base64."""
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The Standard Webhooks signature of a delivery: ``v1,`` and the base64 of
    HMAC-SHA256 over ``id.timestamp.body`` with the secret's bytes."""
    key = base64.b64decode(secret.removeprefix(PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


class Sealer:
    """Seals secrets for the database and opens them again."""

    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError(f"the webhooks key must be 32 bytes, got {len(key)}")
        self._aead = AESGCM(key)

    @classmethod
    def from_settings(cls, configured: str | None, data_dir: Path) -> Sealer:
        """With ``PLUMBLINE_WEBHOOKS_KEY`` (base64 of 32 bytes), that key; without, the
        data directory's key file, made on first use (readable by its owner only)."""
        if configured:
            try:
                return cls(base64.b64decode(configured, validate=True))
            except (binascii.Error, ValueError) as exc:
                raise ValueError(
                    "PLUMBLINE_WEBHOOKS_KEY must be 32 random bytes in base64 "
                    "(for example: openssl rand -base64 32)"
                ) from exc
        path = data_dir / KEY_FILE
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            made = base64.b64encode(secrets.token_bytes(32))
            # O_EXCL: of two processes making it at once, one writes and both read it.
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "wb") as out:
                    out.write(made)
                log.info("hooks: made the webhook sealing key %s", path)
        return cls(base64.b64decode(path.read_bytes().strip()))

    def seal(self, secret: str) -> str:
        """``secret`` as the database keeps it."""
        nonce = secrets.token_bytes(12)
        sealed = self._aead.encrypt(nonce, secret.encode(), _PURPOSE)
        return SEALED + base64.b64encode(nonce + sealed).decode()

    def open(self, sealed: str) -> str:
        """The secret ``seal`` made ``sealed`` of; ValueError with another key."""
        if not sealed.startswith(SEALED):
            raise ValueError("not a sealed webhook secret")
        raw = base64.b64decode(sealed.removeprefix(SEALED))
        try:
            return self._aead.decrypt(raw[:12], raw[12:], _PURPOSE).decode()
        except InvalidTag:
            raise ValueError(
                "a webhook secret does not open with this key: PLUMBLINE_WEBHOOKS_KEY "
                "differs from the key it was sealed with"
            ) from None
