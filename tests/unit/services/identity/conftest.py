"""identity's fixtures: its migrated SQLite database and its bootstrapped domain."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from plumbline.common.db import Database
from plumbline.services.identity.models import outbox
from tests.unit.services.conftest import IdentityDomain, identity_domain, migrated

#: The create_user body of a user the tests make (``dict(USER, username=...)`` for more).
USER = {
    "username": "Alice",
    "password": "s3cret",
    "first_name": "Alice",
    "last_name": "A",
    "email": "alice@example.com",
    "license_type": "NAMED",
}


@pytest.fixture
async def identity_db(tmp_path: Path) -> AsyncIterator[Database]:
    db = await migrated("identity", tmp_path)
    yield db
    await db.close()


@pytest.fixture
async def identity(identity_db: Database) -> IdentityDomain:
    return await identity_domain(identity_db)


async def event_types(db: Database) -> list[str]:
    """The types of the events in identity's outbox, oldest first."""
    async with db.read() as session:
        rows = (await session.execute(select(outbox.c.body).order_by(outbox.c.id))).all()
    return [json.loads(r.body)["type"] for r in rows]
