"""The hooks service's database, on SQLite and PostgreSQL, through its own migrations."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from plumbline.common.db import Database
from plumbline.common.migrations import upgrade
from tests.unit.common.conftest import db_url, pg_url  # noqa: F401  (fixtures)


@pytest.fixture
async def hooks_db(db_url: str) -> AsyncIterator[Database]:  # noqa: F811
    await upgrade("hooks", db_url)
    db = Database(db_url)
    try:
        yield db
    finally:
        await db.close()
