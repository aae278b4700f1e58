"""identity's rules: who may do what, and what each change announces."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import jwt
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from plumbline.common.access import Action
from plumbline.common.context import (
    ORG_ADMIN,
    SYSTEM,
    Principal,
    current_principal,
    require_principal,
)
from plumbline.common.dates import utcnow
from plumbline.common.db import Database, affected, insert_id, unique_violation
from plumbline.common.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
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
from plumbline.services.identity.models import (
    api_clients,
    group_members,
    groups,
    signing_keys,
    users,
)
from plumbline.services.identity.permissions import Permissions

log = logging.getLogger(__name__)

USER_FIELDS = (
    "username",
    "first_name",
    "last_name",
    "email",
    "phone",
    "title",
    "location",
    "license_type",
)
REQUIRED_ON_CREATE = ("username", "first_name", "last_name", "email", "license_type", "password")


def _check_username(name: str) -> None:
    """User names go into Basic credentials (``user:password``) and into logs."""
    if (
        ":" in name
        or not name.isprintable()
        or name != name.strip()
        or any(c.isspace() and c != " " for c in name)
    ):
        raise InvalidArgument(
            "username may contain any printable characters except ':' (Basic authentication "
            "separates user name and password with it), and must not start or end with a "
            f"space; got {name!r}."
        )


@dataclass(frozen=True)
class IssuedToken:
    """An access token and what the token endpoint says about it."""

    token: str
    expires_in: int
    scope: str
    tenant: str
    jti: str


def _require_user_admin() -> Principal:
    principal = require_principal()
    if not principal.may_manage_users:
        raise PermissionDenied("Only organization or user administrators may do this.")
    return principal


class Identity:
    """Users, groups, credentials and tokens."""

    def __init__(
        self,
        db: Database,
        outbox: Outbox,
        passwords: Passwords,
        token_ttl: int,
        tenant: str,
        permissions: Permissions,
    ) -> None:
        self.db = db
        self.permissions = permissions
        self.outbox = outbox
        self.passwords = passwords
        self.token_ttl = token_ttl
        self.tenant = tenant
        self._key: SigningKey | None = None

    # -- start-up ----------------------------------------------------------------

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
                await self._insert_user(
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

    # -- authentication ------------------------------------------------------------

    async def authenticate_basic(self, username: str, password: str) -> Principal:
        """The principal for a user name and password; inactive users are refused."""
        async with self.db.read() as session:
            row = await store.credentials_of(session, username)
        if row is None:
            # As slow as a wrong password, so the time does not tell which names exist.
            await self.passwords.verify_absent(password)
            raise Unauthenticated("The user name or password is not correct.")
        if not await self.passwords.verify(row.password_hash, password):
            raise Unauthenticated("The user name or password is not correct.")
        if not row.active:
            raise Unauthenticated(f"The user {row.username!r} is inactive.")
        return Principal(row.id, row.username, parse_roles(row.roles))

    async def principal(self, user_id: int) -> tuple[Principal, bool]:
        """The principal for a user id and whether the user is active."""
        async with self.db.read() as session:
            row = (
                await session.execute(
                    select(users.c.id, users.c.username, users.c.active, users.c.roles).where(
                        users.c.id == user_id
                    )
                )
            ).first()
        if row is None:
            raise NotFound(f"No user with id {user_id}.")
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
        if row is None:
            # An unknown client id costs what a wrong secret costs: no enumeration.
            await self.passwords.verify_absent(secret)
            raise Unauthenticated("The client id or client secret is not correct.")
        if not await self.passwords.verify(row.secret_hash, secret):
            raise Unauthenticated("The client id or client secret is not correct.")
        if not row.active:
            raise Unauthenticated("The user of these client credentials is inactive.")
        return self._issue(row.user_id, client_id)

    async def issue_user_token(self, username: str, password: str) -> IssuedToken:
        """A token for a user who logged in with a password (the docs page's session)."""
        principal = await self.authenticate_basic(username, password)
        return self._issue(principal.user_id, None)

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
            if await store.user_by_id(session, user_id) is None:
                raise NotFound(f"No user with id {user_id}.")
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

    # -- users -------------------------------------------------------------------

    async def list_users(self, project: int | None = None, **filters: Any) -> tuple[list[Any], int]:
        """``GET /users``: user administrators; with ``project``, its administrators too."""
        among = await self._listing_scope(project, "users")
        async with self.db.read() as session:
            return await store.list_users(session, among=among, **filters)

    async def _listing_scope(self, project: int | None, what: str) -> set[int] | None:
        """Who may list users or groups: user administrators, or the administrators of
        the ``project`` they pass; returns the users a project's listing is limited to."""
        caller = require_principal()
        if project is None:
            if not caller.may_manage_users:
                raise PermissionDenied(
                    f"Only organization or user administrators may list {what}; project "
                    "administrators may pass the id of a project they administer as project."
                )
            return None
        if not caller.may_manage_users and not await self.permissions.administers(caller, project):
            raise PermissionDenied(f"You do not administer project {project}.")
        return await self.permissions.members_of(project) if what == "users" else None

    async def get_users(self, ids: list[int]) -> list[Any]:
        """Batch read for includes; no visibility filter beyond authentication."""
        require_principal()
        async with self.db.read() as session:
            return await store.users_by_ids(session, ids)

    async def get_user(self, user_id: int) -> Any:
        """One user, if the caller may see them."""
        caller = require_principal()
        async with self.db.read() as session:
            row = await store.user_by_id(session, user_id)
            if row is None:
                raise NotFound(f"No user with id {user_id}.")
            if caller.user_id == user_id or caller.may_manage_users:
                return row
            shares_group = await store.share_a_group(session, caller.user_id, user_id)
        if not shares_group and not await self.permissions.share_a_project(caller, user_id):
            raise PermissionDenied(f"You do not have access to user {user_id}.")
        return row

    async def create_user(self, values: dict[str, Any]) -> int:
        """``POST /users``."""
        caller = _require_user_admin()
        missing = [f for f in REQUIRED_ON_CREATE if not values.get(f)]
        if missing:
            raise InvalidArgument(f"Missing required field(s): {', '.join(missing)}.")
        _check_username(values["username"])
        hashed = await self.passwords.hash(values.pop("password"))
        return await self._insert_user(values, hashed, roles="", actor=caller)

    async def _insert_user(
        self, values: dict[str, Any], hashed: str, roles: str, actor: Principal
    ) -> int:
        now = utcnow()
        row = {f: values.get(f) or "" for f in USER_FIELDS}
        try:
            async with self.outbox.transaction() as session:
                user_id = await insert_id(
                    session,
                    users.insert().values(
                        **row,
                        username_key=row["username"].lower(),
                        active=True,
                        roles=roles,
                        password_hash=hashed,
                        version=1,
                        created_at=now,
                        modified_at=now,
                    ),
                )
                await self.outbox.add(
                    session, user_event("created", user_id, actor, row["username"], 1)
                )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    f"A user with the username {row['username']!r} already exists."
                ) from None
            raise
        return user_id

    async def update_user(self, user_id: int, values: dict[str, Any]) -> None:
        """``PUT /users/{id}``: administrators, or users changing themselves."""
        caller = require_principal()
        if caller.user_id != user_id and not caller.may_manage_users:
            raise PermissionDenied(f"You may not change user {user_id}.")
        if "password" in values:
            raise InvalidArgument("password cannot be changed with PUT /users/{id}.")
        changes = {
            f: values[f] if values[f] is not None else "" for f in USER_FIELDS if f in values
        }
        if "username" in changes:
            if not changes["username"]:
                raise InvalidArgument("username must not be empty.")
            _check_username(changes["username"])
            changes["username_key"] = changes["username"].lower()
        try:
            async with self.outbox.transaction() as session:
                current = await store.user_by_id(session, user_id)
                if current is None:
                    raise NotFound(f"No user with id {user_id}.")
                license_type = changes.get("license_type", current.license_type)
                if license_type != current.license_type and not caller.may_manage_users:
                    raise PermissionDenied(
                        "Only organization or user administrators may change licenseType."
                    )
                version = current.version + 1
                await session.execute(
                    update(users)
                    .where(users.c.id == user_id)
                    .values(**changes, version=version, modified_at=utcnow())
                )
                name = changes.get("username", current.username)
                await self.outbox.add(
                    session, user_event("updated", user_id, caller, name, version)
                )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(
                    f"A user with the username {changes.get('username')!r} already exists."
                ) from None
            raise

    async def set_user_active(self, user_id: int, active: bool) -> None:
        """``PUT /users/{id}/active``."""
        caller = _require_user_admin()
        if user_id == caller.user_id and not active:
            raise FailedPrecondition("You cannot deactivate yourself.")
        async with self.outbox.transaction() as session:
            current = await store.user_by_id(session, user_id)
            if current is None:
                raise NotFound(f"No user with id {user_id}.")
            version = current.version + 1
            await session.execute(
                update(users)
                .where(users.c.id == user_id)
                .values(active=active, version=version, modified_at=utcnow())
            )
            action = "activated" if active else "deactivated"
            await self.outbox.add(
                session, user_event(action, user_id, caller, current.username, version)
            )

    # -- groups ------------------------------------------------------------------

    async def list_groups(
        self, project: int | None, start_at: int, max_results: int
    ) -> tuple[list[Any], int]:
        """``GET /usergroups``: user administrators; with ``project``, its administrators."""
        await self._listing_scope(project, "user groups")
        async with self.db.read() as session:
            return await store.list_groups(session, project, start_at, max_results)

    async def get_groups(self, ids: list[int]) -> list[Any]:
        """Groups by id."""
        require_principal()
        async with self.db.read() as session:
            return await store.groups_by_ids(session, ids)

    async def get_group(self, group_id: int) -> Any:
        """One group: administrators and its members."""
        caller = require_principal()
        async with self.db.read() as session:
            rows = await store.groups_by_ids(session, [group_id])
            if not rows:
                raise NotFound(f"No user group with id {group_id}.")
            member = caller.may_manage_users or await session.scalar(
                select(group_members.c.user_id).where(
                    group_members.c.group_id == group_id,
                    group_members.c.user_id == caller.user_id,
                )
            )
        project = rows[0].project
        if member is None and not (
            project is not None
            and (await self.permissions.access(caller)).may(Action.READ, project)
        ):
            raise PermissionDenied(f"You do not have access to user group {group_id}.")
        return rows[0]

    async def create_group(self, name: str, description: str, project: int | None) -> int:
        """``POST /usergroups``."""
        caller = _require_user_admin()
        if not name.strip():
            raise InvalidArgument("name must not be empty.")
        now = utcnow()
        try:
            async with self.outbox.transaction() as session:
                await self._check_group_name(session, name, project, None)
                group_id = await insert_id(
                    session,
                    groups.insert().values(
                        name=name,
                        description=description,
                        project=project,
                        version=1,
                        created_at=now,
                        modified_at=now,
                    ),
                )
                await self.outbox.add(
                    session, _group_event("created", group_id, caller, name, project)
                )
        except IntegrityError as exc:
            if unique_violation(exc):
                raise AlreadyExists(f"A user group named {name!r} already exists.") from None
            raise
        return group_id

    async def _check_group_name(
        self, session: Any, name: str, project: int | None, exclude: int | None
    ) -> None:
        # NULL projects are never equal in a unique index, so organisation-wide
        # groups are checked here as well.
        query = select(groups.c.id).where(groups.c.name == name)
        query = query.where(
            groups.c.project.is_(None) if project is None else groups.c.project == project
        )
        if exclude is not None:
            query = query.where(groups.c.id != exclude)
        if await session.scalar(query) is not None:
            raise AlreadyExists(f"A user group named {name!r} already exists.")

    async def update_group(self, group_id: int, values: dict[str, Any]) -> None:
        """``PUT /usergroups/{id}``."""
        caller = _require_user_admin()
        async with self.outbox.transaction() as session:
            rows = await store.groups_by_ids(session, [group_id])
            if not rows:
                raise NotFound(f"No user group with id {group_id}.")
            current = rows[0]
            changes = {k: v for k, v in values.items() if k in ("name", "description", "project")}
            if "name" in changes and not (changes["name"] or "").strip():
                raise InvalidArgument("name must not be empty.")
            name = changes.get("name", current.name)
            project = changes.get("project", current.project)
            await self._check_group_name(session, name, project, group_id)
            await session.execute(
                update(groups)
                .where(groups.c.id == group_id)
                .values(**changes, version=current.version + 1, modified_at=utcnow())
            )
            await self.outbox.add(session, _group_event("updated", group_id, caller, name, project))

    async def delete_group(self, group_id: int) -> None:
        """``DELETE /usergroups/{id}``."""
        caller = _require_user_admin()
        async with self.outbox.transaction() as session:
            rows = await store.groups_by_ids(session, [group_id])
            if not rows:
                raise NotFound(f"No user group with id {group_id}.")
            await session.execute(delete(group_members).where(group_members.c.group_id == group_id))
            await session.execute(delete(groups).where(groups.c.id == group_id))
            await self.outbox.add(
                session, _group_event("deleted", group_id, caller, rows[0].name, rows[0].project)
            )

    async def group_members(
        self, group_id: int, start_at: int, max_results: int
    ) -> tuple[list[Any], int]:
        """``GET /usergroups/{id}/users``."""
        await self.get_group(group_id)
        async with self.db.read() as session:
            return await store.group_members_page(session, group_id, start_at, max_results)

    async def add_member(self, group_id: int, user_id: int) -> None:
        """``POST /usergroups/{id}/users``."""
        caller = _require_user_admin()
        async with self.outbox.transaction() as session:
            group = await store.groups_by_ids(session, [group_id])
            if not group:
                raise NotFound(f"No user group with id {group_id}.")
            if await store.user_by_id(session, user_id) is None:
                raise InvalidArgument(f"No user with id {user_id}.")
            exists = await session.scalar(
                select(group_members.c.user_id).where(
                    group_members.c.group_id == group_id, group_members.c.user_id == user_id
                )
            )
            if exists is not None:
                raise AlreadyExists(f"User {user_id} already exists in user group {group_id}.")
            await session.execute(group_members.insert().values(group_id=group_id, user_id=user_id))
            await self.outbox.add(
                session,
                _group_event(
                    "member_added", group_id, caller, group[0].name, group[0].project, user_id
                ),
            )

    async def remove_member(self, group_id: int, user_id: int) -> None:
        """``DELETE /usergroups/{id}/users/{userId}``."""
        caller = _require_user_admin()
        async with self.outbox.transaction() as session:
            group = await store.groups_by_ids(session, [group_id])
            if not group:
                raise NotFound(f"No user group with id {group_id}.")
            removed = await affected(
                session,
                delete(group_members).where(
                    group_members.c.group_id == group_id, group_members.c.user_id == user_id
                ),
            )
            if removed == 0:
                raise NotFound(f"User {user_id} is not a member of user group {group_id}.")
            await self.outbox.add(
                session,
                _group_event(
                    "member_removed", group_id, caller, group[0].name, group[0].project, user_id
                ),
            )

    def verify_token(self, token: str) -> int:
        """The user id of a valid token (used by the CLI and tests)."""
        assert self._key is not None
        claims = jwt.decode(token, self._key.public_pem, algorithms=["EdDSA"], issuer="plumbline")
        return int(claims["sub"])


def parse_roles(text: str) -> frozenset[str]:
    """A user's organisation roles as stored (a comma list)."""
    return frozenset(r for r in text.split(",") if r)


def user_event(action: str, user_id: int, actor: Principal, username: str, version: int) -> Event:
    """``identity.user.<action>``: every gateway drops the user's cached principal on it."""
    return Event(
        f"identity.user.{action}",
        actor=actor.user_id or None,
        object_ids=[user_id],
        version=version,
        payload={"user": user_id, "username": username},
    )


def _group_event(
    action: str,
    group_id: int,
    actor: Principal,
    name: str,
    project: int | None,
    user_id: int | None = None,
) -> Event:
    payload: dict[str, Any] = {"group": group_id, "name": name}
    if user_id is not None:
        payload["user"] = user_id
    return Event(
        f"identity.group.{action}",
        actor=actor.user_id,
        project=project,
        object_ids=[group_id],
        payload=payload,
    )
