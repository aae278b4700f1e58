"""One Alembic history per service, applied by ``plumbline migrate`` or at start-up.

A service's ``migrations/env.py`` calls ``run_env(metadata)``; ``upgrade`` applies its
history to a database URL (async drivers both; Alembic runs in a worker thread).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from pathlib import Path

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
        )
        with context.begin_transaction():
            context.run_migrations()

    async def main() -> None:
        engine = create_engine(url)
        async with engine.begin() as connection:
            await connection.run_sync(migrate)
        await engine.dispose()

    asyncio.run(main())
