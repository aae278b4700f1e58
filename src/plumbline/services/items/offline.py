"""items operations run from the command line, straight on its database."""

from __future__ import annotations

from pathlib import Path

from plumbline.common.db import Database
from plumbline.common.migrations import upgrade
from plumbline.common.settings import Settings
from plumbline.services.items import configdoc
from plumbline.services.items.config import Configuration


async def apply_config(settings: Settings, path: Path, dry_run: bool) -> list[str]:
    """``plumbline config apply``: what changed (or would change)."""
    doc = configdoc.load(path)
    url = settings.database_url_for("items")
    await upgrade("items", url)
    db = Database(url)
    try:
        return await Configuration(db).apply(doc, dry_run=dry_run)
    finally:
        await db.close()
