"""Organisation roles: organisation administrators give and take ``USER_ADMIN``.

``ORGANIZATION_ADMIN`` is shown but not changed here: the first admin is created at
start, and an API that could take the role from the last administrator would need rules
of its own. A role change is a ``identity.user.updated`` event, so every gateway drops
the user's cached principal (whose roles travel to the services with each call).
"""

from __future__ import annotations

from sqlalchemy import update

from plumbline.common.context import ORG_ADMIN, USER_ADMIN, require_admin, require_principal
from plumbline.common.dates import utcnow
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, PermissionDenied
from plumbline.common.outbox import Outbox
from plumbline.services.identity import store
from plumbline.services.identity.events import user_event
from plumbline.services.identity.models import users

#: The roles a user may hold, in the order they are listed.
KNOWN = (ORG_ADMIN, USER_ADMIN)


def parse_roles(text: str) -> frozenset[str]:
    """A user's organisation roles as stored (a comma list)."""
    return frozenset(r for r in text.split(",") if r)


class Roles:
    """Reads and sets a user's organisation roles."""

    def __init__(self, db: Database, outbox: Outbox) -> None:
        self.db = db
        self.outbox = outbox

    async def get(self, user_id: int) -> list[str]:
        """A user's roles: for the user and for user administrators."""
        caller = require_principal()
        if caller.user_id != user_id and not caller.may_manage_users:
            raise PermissionDenied(f"You may not see the roles of user {user_id}.")
        async with self.db.read() as session:
            row = await store.user_or_missing(session, user_id)
        return _listed(parse_roles(row.roles))

    async def set(self, user_id: int, roles: list[str]) -> list[str]:
        """Replaces a user's roles; only ``USER_ADMIN`` may come or go."""
        caller = require_admin("give or take user roles")
        wanted = {r.strip().upper() for r in roles}
        unknown = sorted(wanted - set(KNOWN))
        if unknown:
            raise InvalidArgument(
                f"roles may hold {' and '.join(KNOWN)}; {', '.join(map(repr, unknown))} "
                "is not a role."
            )
        async with self.outbox.transaction() as session:
            row = await store.user_or_missing(session, user_id)
            current = parse_roles(row.roles)
            if ORG_ADMIN in current and ORG_ADMIN not in wanted:
                raise InvalidArgument(
                    f"{ORG_ADMIN} cannot be taken through the API: keep it in roles for "
                    f"user {user_id}, who has it."
                )
            if ORG_ADMIN in wanted and ORG_ADMIN not in current:
                raise InvalidArgument(
                    f"{ORG_ADMIN} cannot be given through the API; only {USER_ADMIN} can be "
                    "given or taken."
                )
            if wanted == current:
                return _listed(current)
            version = row.version + 1
            await session.execute(
                update(users)
                .where(users.c.id == user_id)
                .values(roles=",".join(_listed(wanted)), version=version, modified_at=utcnow())
            )
            await self.outbox.add(
                session, user_event("updated", user_id, caller, row.username, version)
            )
        return _listed(frozenset(wanted))


def _listed(roles: frozenset[str] | set[str]) -> list[str]:
    return [r for r in KNOWN if r in roles]
