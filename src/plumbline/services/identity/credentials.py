"""A user's API client credentials after they are created: listing and revoking.

A revoked client keeps its row (``revoked_at``): the token exchange refuses it, and the
gateways load the recently revoked client ids at start and learn new ones from the
``identity.apiclient.revoked`` event, so tokens issued before the revocation stop working
without a call per request.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select, update

from plumbline.common.context import require_principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, first_or_missing
from plumbline.common.errors import PermissionDenied
from plumbline.common.events import Event
from plumbline.common.outbox import Outbox
from plumbline.services.identity.models import api_clients

#: Revocations the gateways still need beyond the token lifetime (clock skew, restarts).
REVOKED_MARGIN = timedelta(minutes=5)


def _require_owner_or_admin(user_id: int, to_do: str) -> int:
    caller = require_principal()
    if caller.user_id != user_id and not caller.is_admin:
        raise PermissionDenied(
            f"You may {to_do} only your own API credentials; organization administrators "
            "may do it for anyone."
        )
    return caller.user_id


class Credentials:
    """Lists and revokes client credentials."""

    def __init__(self, db: Database, outbox: Outbox, token_ttl: int) -> None:
        self.db = db
        self.outbox = outbox
        self.token_ttl = token_ttl

    async def of_user(self, user_id: int, start_at: int, max_results: int) -> tuple[list[Any], int]:
        """A user's credentials that are not revoked, oldest first."""
        _require_owner_or_admin(user_id, "list")
        where = (api_clients.c.user_id == user_id) & api_clients.c.revoked_at.is_(None)
        async with self.db.read() as session:
            total = await session.scalar(select(func.count()).select_from(api_clients).where(where))
            rows = (
                await session.execute(
                    select(
                        api_clients.c.id,
                        api_clients.c.client_id,
                        api_clients.c.name,
                        api_clients.c.user_id,
                        api_clients.c.created_at,
                    )
                    .where(where)
                    .order_by(api_clients.c.id)
                    .offset(start_at)
                    .limit(max_results)
                )
            ).all()
        return list(rows), int(total or 0)

    async def revoke(self, user_id: int, credentials_id: int) -> None:
        """Revokes one of a user's credentials; the event tells every gateway."""
        actor = _require_owner_or_admin(user_id, "revoke")
        async with self.outbox.transaction() as session:
            row = await first_or_missing(
                session,
                select(api_clients.c.client_id, api_clients.c.name).where(
                    api_clients.c.id == credentials_id,
                    api_clients.c.user_id == user_id,
                    api_clients.c.revoked_at.is_(None),
                ),
                f"User {user_id} has no API credentials with id {credentials_id}.",
            )
            await session.execute(
                update(api_clients)
                .where(api_clients.c.id == credentials_id)
                .values(revoked_at=utcnow())
            )
            await self.outbox.add(
                session,
                Event(
                    "identity.apiclient.revoked",
                    actor=actor or None,
                    object_ids=[credentials_id],
                    payload={"user": user_id, "name": row.name, "clientId": row.client_id},
                ),
            )

    async def revoked_clients(self) -> list[str]:
        """Client ids revoked while a token issued to them may still be unexpired.

        Asked by the gateways at start, without a caller.
        """
        since = utcnow() - timedelta(seconds=self.token_ttl) - REVOKED_MARGIN
        async with self.db.read() as session:
            rows = await session.scalars(
                select(api_clients.c.client_id).where(api_clients.c.revoked_at >= since)
            )
            return list(rows)
