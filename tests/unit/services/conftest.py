"""The services' shared harness: real SQLite databases with a service's own migrations
(each service's folder has the fixture of its database), principals and access caches."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.common.access import AccessCache, Role
from plumbline.common.context import ORG_ADMIN, Principal, principal_var
from plumbline.common.db import Database
from plumbline.common.migrations import upgrade
from plumbline.common.outbox import Outbox
from plumbline.services.identity.auth import Auth
from plumbline.services.identity.crypto import Passwords
from plumbline.services.identity.groups import Groups
from plumbline.services.identity.permissions import Permissions
from plumbline.services.identity.users import Users
from plumbline.services.items.config import Configuration
from plumbline.services.items.module import install_default_configuration
from plumbline.services.items.projects import Placer, ProjectInput, Projects

ADMIN = Principal(1, "admin", frozenset({ORG_ADMIN}))


def access_cache(roles: Mapping[int, Mapping[int, Role]] | None = None) -> AccessCache:
    """An access cache whose users have the given roles by project (admins: all)."""
    known = roles or {}

    async def fetch(user_id: int) -> Mapping[int, Role]:
        return known.get(user_id, {})

    return AccessCache(fetch, ttl=60)


class RecordingPlacer(Placer):
    """Keeps what the items service would report to identity."""

    def __init__(self) -> None:
        super().__init__(lambda: None)  # type: ignore[arg-type,return-value]
        self.placed: list[tuple[int, int | None, bool]] = []

    async def place(self, rows: list[Any]) -> None:
        self.placed += [(r.id, r.parent, r.is_folder) for r in rows]


@contextlib.contextmanager
def acting_as(principal: Principal | None) -> Iterator[None]:
    """Runs the block as ``principal``."""
    token = principal_var.set(principal)
    try:
        yield
    finally:
        principal_var.reset(token)


async def migrated(service: str, tmp_path: Path) -> Database:
    """A fresh SQLite database with ``service``'s migrations applied."""
    url = f"sqlite+aiosqlite:///{tmp_path / service}.db"
    await upgrade(service, url)
    return Database(url)


def outbox_for(db: Database, service: str) -> Outbox:
    """The outbox of a service's database."""
    import importlib

    models = importlib.import_module(f"plumbline.services.{service}.models")
    return Outbox(db, models.outbox, service)


async def project_with_configuration(
    db: Database, key: str
) -> tuple[Outbox, Configuration, int, dict[str, int]]:
    """The items database ``db`` with the default configuration and a project ``key``:
    its outbox, the configuration, the project's id and the item types' ids by key."""
    outbox = outbox_for(db, "items")
    config = Configuration(db)
    with acting_as(ADMIN):
        await install_default_configuration(config)
        project = await Projects(db, outbox, access_cache(), RecordingPlacer()).create(
            ProjectInput(project_key=key, fields={"name": key.title()})
        )
        catalog = await config.catalog()
    return outbox, config, project, {t.type_key: t.id for t in catalog.item_types.values()}


@dataclass(frozen=True)
class IdentityDomain:
    """identity's domain objects, built as its module's ``start`` builds them."""

    auth: Auth
    users: Users
    groups: Groups
    permissions: Permissions


async def identity_domain(db: Database) -> IdentityDomain:
    """identity's domain on ``db``, bootstrapped (the admin's password is ``admin-pw``)."""
    box = outbox_for(db, "identity")
    passwords = Passwords(1, 8192)
    permissions = Permissions(db, box)
    domain = IdentityDomain(
        Auth(db, box, passwords, 3600, "t"),
        Users(db, box, passwords, permissions),
        Groups(db, box, permissions),
        permissions,
    )
    await domain.auth.bootstrap("admin-pw")
    return domain
