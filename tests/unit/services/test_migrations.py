"""Each service's migration history builds exactly the tables its models declare."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from plumbline.common.migrations import comparable, upgrade
from plumbline.common.settings import SERVICES
from tests.unit.common.conftest import pg_url  # noqa: F401  (fixture)


async def _difference(service: str, url: str) -> list[object]:
    await upgrade(service, url)
    await upgrade(service, url)  # a second run is a no-op
    metadata = importlib.import_module(f"plumbline.services.{service}.models").metadata
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(
                lambda sync: compare_metadata(
                    MigrationContext.configure(
                        sync, opts={"include_object": comparable(metadata, sync.dialect.name)}
                    ),
                    metadata,
                )
            )
    finally:
        await engine.dispose()


@pytest.mark.parametrize("service", SERVICES)
async def test_sqlite_schema_matches_the_models(service: str, tmp_path: Path) -> None:
    assert await _difference(service, f"sqlite+aiosqlite:///{tmp_path}/{service}.db") == []


@pytest.mark.parametrize("service", SERVICES)
async def test_postgres_schema_matches_the_models(service: str, pg_url: str) -> None:  # noqa: F811
    assert await _difference(service, pg_url) == []
