"""identity operations run from the command line, straight on its database."""

from __future__ import annotations

from plumbline.common.context import SYSTEM, principal_var
from plumbline.common.db import Database
from plumbline.common.errors import NotFound
from plumbline.common.migrations import upgrade
from plumbline.common.outbox import Outbox
from plumbline.common.settings import Settings
from plumbline.services.identity import store
from plumbline.services.identity.auth import Auth
from plumbline.services.identity.crypto import Passwords
from plumbline.services.identity.models import outbox


async def create_credentials(settings: Settings, username: str, name: str) -> tuple[str, str]:
    """``plumbline credentials create``: (client id, secret) for ``username``.

    The event goes to the outbox; the running identity service relays it.
    """
    url = settings.database_url_for("identity")
    await upgrade("identity", url)
    db = Database(url)
    try:
        box = Outbox(db, outbox, "identity")
        auth = Auth(
            db,
            box,
            Passwords(settings.password_time_cost, settings.password_memory_cost),
            settings.token_ttl,
            settings.tenant,
        )
        async with db.read() as session:
            row = await store.credentials_of(session, username)
        if row is None:
            raise NotFound(f"No user named {username!r}.")
        token = principal_var.set(SYSTEM)
        try:
            _id, client_id, secret = await auth.create_client_credentials(row.id, name)
        finally:
            principal_var.reset(token)
        return client_id, secret
    finally:
        await db.close()
