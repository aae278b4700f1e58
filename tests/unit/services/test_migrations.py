"""Each service's migration history builds exactly the tables its models declare."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from plumbline.common.migrations import upgrade
from tests.unit.common.conftest import pg_url  # noqa: F401  (fixture)

SERVICES = ("identity", "items", "activity")


#: Tables that migrations create with raw DDL because SQLAlchemy cannot declare them: the
#: FTS5 virtual table behind ``contains`` on SQLite and the shadow tables FTS5 keeps.
UNDECLARED_TABLES = {
    "items_fts",
    "items_fts_config",
    "items_fts_data",
    "items_fts_docsize",
    "items_fts_idx",
}


def _compared(dialect: str) -> Callable[..., bool]:
    def include(obj: Any, name: str | None, type_: str, reflected: bool, _to: Any) -> bool:
        if type_ == "table" and reflected and name in UNDECLARED_TABLES:
            return False
        # An index declared with ddl_if(dialect=...) (the trigram index, PostgreSQL only)
        # exists only on that dialect.
        condition = getattr(obj, "_ddl_if", None) if type_ == "index" else None
        return condition is None or condition.dialect in (None, dialect)

    return include


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
                        sync, opts={"include_object": _compared(sync.dialect.name)}
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
