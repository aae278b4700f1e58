"""identity as a runnable module."""

from __future__ import annotations

import logging

from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument
from plumbline.common.migrations import upgrade
from plumbline.common.outbox import Outbox
from plumbline.runtime import Module, Runtime
from plumbline.services.identity.api.auth import AuthServicer
from plumbline.services.identity.api.cors import CorsSettingsServicer
from plumbline.services.identity.api.credentials import CredentialsServicer
from plumbline.services.identity.api.groups import GroupsServicer
from plumbline.services.identity.api.permissions import PermissionsServicer
from plumbline.services.identity.api.roles import RolesServicer
from plumbline.services.identity.api.users import UsersServicer
from plumbline.services.identity.auth import Auth
from plumbline.services.identity.cors import CorsOrigins
from plumbline.services.identity.credentials import Credentials
from plumbline.services.identity.crypto import Passwords
from plumbline.services.identity.groups import Groups
from plumbline.services.identity.models import outbox
from plumbline.services.identity.permissions import Permissions
from plumbline.services.identity.roles import Roles
from plumbline.services.identity.users import Users

log = logging.getLogger(__name__)

EMBEDDED_ADMIN_PASSWORD = "admin"


def admin_password(runtime: Runtime) -> str:
    """The first admin's password: required everywhere but the embedded default."""
    configured = runtime.settings.admin_password
    if configured:
        return configured
    if runtime.embedded:
        return EMBEDDED_ADMIN_PASSWORD
    raise InvalidArgument(
        "PLUMBLINE_ADMIN_PASSWORD must be set: only the embedded default "
        "(--target all on SQLite with the memory bus) may use the default password"
    )


class IdentityModule(Module):
    """Users, groups, credentials, tokens."""

    name = "identity"

    async def start(self, runtime: Runtime) -> None:
        settings = runtime.settings
        password = admin_password(runtime)
        url = settings.database_url_for(self.name)
        if runtime.embedded or settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.outbox = Outbox(self.db, outbox, self.name)
        passwords = Passwords(settings.password_time_cost, settings.password_memory_cost)
        self.permissions = Permissions(self.db, self.outbox)
        auth = Auth(self.db, self.outbox, passwords, settings.token_ttl, settings.tenant)
        users = Users(self.db, self.outbox, passwords, self.permissions)
        groups = Groups(self.db, self.outbox, self.permissions)
        if await auth.bootstrap(password) and not settings.admin_password:
            # Said once, when the admin is made: later starts find it as it was left.
            log.warning(
                "WARNING: the organization admin 'admin' has the password 'admin'. "
                "Set PLUMBLINE_ADMIN_PASSWORD before the first start of a shared system."
            )
        grpc = runtime.grpc
        grpc.add(identity_pb2_grpc.add_AuthServicer_to_server, AuthServicer(auth))
        grpc.add(identity_pb2_grpc.add_UsersServicer_to_server, UsersServicer(users))
        grpc.add(identity_pb2_grpc.add_GroupsServicer_to_server, GroupsServicer(groups))
        grpc.add(
            identity_pb2_grpc.add_PermissionsServicer_to_server,
            PermissionsServicer(self.permissions),
        )
        runtime.publishes(self.outbox)
        roles = Roles(self.db, self.outbox)
        grpc.add(identity_pb2_grpc.add_RolesServicer_to_server, RolesServicer(roles))
        credentials = Credentials(self.db, self.outbox, settings.token_ttl)
        grpc.add(
            identity_pb2_grpc.add_CredentialsServicer_to_server, CredentialsServicer(credentials)
        )
        origins = CorsOrigins(self.db, self.outbox)
        grpc.add(
            identity_pb2_grpc.add_CorsSettingsServicer_to_server, CorsSettingsServicer(origins)
        )

    async def serve(self, runtime: Runtime) -> None:
        self.outbox.start(runtime.bus)

    async def stop(self) -> None:
        await self.outbox.stop()
        await self.db.close()
