"""One Alembic history per service, applied by ``plumbline migrate`` or at start-up.

A service's ``migrations/env.py`` calls ``run_env(metadata)``; ``upgrade`` applies its
history to a database URL (async drivers both; Alembic runs in a worker thread).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from alembic import command, context
from alembic.config import Config
from sqlalchemy import MetaData
from sqlalchemy.engine import Connection

from plumbline.common.db import create_engine, ensure_database

log = logging.getLogger(__name__)


def config_for(service: str, url: str) -> Config:
    """The Alembic configuration of one service's history."""
    package = importlib.import_module(f"plumbline.services.{service}")
    assert package.__file__ is not None
    location = Path(package.__file__).parent / "migrations"
    config = Config()
    config.set_main_option("script_location", str(location))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["configure_logger"] = False
    return config


async def upgrade(service: str, url: str) -> None:
    """Creates the database if needed and applies every pending migration."""
    await ensure_database(url)
    await asyncio.to_thread(command.upgrade, config_for(service, url), "head")


#: ``metadata.info`` key naming tables a history creates with raw DDL because SQLAlchemy
#: cannot declare them (the items service's FTS5 table and its shadow tables).
UNDECLARED = "undeclared_tables"


def comparable(metadata: MetaData, dialect: str) -> Callable[..., bool]:
    """Alembic's ``include_object`` for comparing ``metadata`` with a ``dialect`` database.

    It leaves out the undeclared tables, and indexes declared with ``ddl_if`` for another
    dialect, so that autogenerate proposes neither dropping nor creating them.
    """
    undeclared = metadata.info.get(UNDECLARED, frozenset())

    def include(obj: Any, name: str | None, type_: str, reflected: bool, _to: Any) -> bool:
        if type_ == "table" and reflected and name in undeclared:
            return False
        condition = getattr(obj, "_ddl_if", None) if type_ == "index" else None
        return condition is None or condition.dialect in (None, dialect)

    return include


def run_env(metadata: MetaData) -> None:
    """Body of every service's ``env.py``: online migrations on an async engine."""
    url = context.config.get_main_option("sqlalchemy.url")
    assert url is not None

    def migrate(connection: Connection) -> None:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
            include_object=comparable(metadata, connection.dialect.name),
        )
        with context.begin_transaction():
            context.run_migrations()

    async def main() -> None:
        engine = create_engine(url)
        async with engine.begin() as connection:
            await connection.run_sync(migrate)
        await engine.dispose()

    asyncio.run(main())
