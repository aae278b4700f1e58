"""items' fixtures: its migrated SQLite database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from plumbline.common.db import Database
from tests.unit.services.conftest import migrated


@pytest.fixture
async def items_db(tmp_path: Path) -> AsyncIterator[Database]:
    db = await migrated("items", tmp_path)
    yield db
    await db.close()
