"""items' fixtures: its migrated SQLite database, and two projects with the default
configuration with the domain objects that place, synchronize, tag and relate their items."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from plumbline.common.access import Role
from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.events import Event
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.itemdoc import ItemInput
from plumbline.services.items.items import Items
from plumbline.services.items.models import items, outbox
from plumbline.services.items.moves import Moves
from plumbline.services.items.projects import ProjectInput, Projects
from plumbline.services.items.relationships import Relationships
from plumbline.services.items.releases import Releases
from plumbline.services.items.sync import Sync
from plumbline.services.items.tags import Tags
from tests.unit.services.conftest import (
    ADMIN,
    RecordingPlacer,
    access_cache,
    acting_as,
    migrated,
    project_with_configuration,
)

#: May write in project A and only read B.
WRITER_OF_A = Principal(8, "writer")
#: May read project A only.
READER_OF_A = Principal(9, "reader")


@dataclass
class World:
    """Projects A and B and the domain objects that change their items."""

    db: Database
    items: Items
    moves: Moves
    sync: Sync
    tags: Tags
    releases: Releases
    relationships: Relationships
    a: int
    b: int
    folder: int
    types: dict[str, int]

    async def item(
        self,
        name: str,
        parent: int | None = None,
        project: int | None = None,
        type_key: str = "REQ",
        **fields: Any,
    ) -> int:
        """An item (a requirement unless ``type_key`` says) named ``name`` at the bottom
        of ``parent`` (or of the project)."""
        with acting_as(ADMIN):
            return await self.items.create(
                ItemInput(
                    project=project or self.a,
                    item_type=self.types[type_key],
                    fields={"name": name, **fields},
                    parent_item=parent,
                )
            )

    async def rows(self, *ids: int) -> dict[int, Any]:
        """Items by id, as stored."""
        async with self.db.read() as session:
            found = await session.execute(select(items).where(items.c.id.in_(ids)))
            return {r.id: r for r in found.all()}

    async def tree(self, project: int) -> list[tuple[str, str]]:
        """(sequence, name) of a project's active items in project order."""
        async with self.db.read() as session:
            found = await session.execute(
                select(items.c.sequence, items.c.fields_json)
                .where(items.c.project == project, items.c.active.is_(True))
                .order_by(items.c.global_sort_order)
            )
            return [(r.sequence, json.loads(r.fields_json)["name"]) for r in found.all()]

    async def last_event(self) -> int:
        async with self.db.read() as session:
            return int(await session.scalar(select(outbox.c.id).order_by(outbox.c.id.desc())) or 0)

    async def events_after(self, last: int) -> list[Event]:
        async with self.db.read() as session:
            bodies = await session.scalars(
                select(outbox.c.body).where(outbox.c.id > last).order_by(outbox.c.id)
            )
            return [Event.from_json(b) for b in bodies]


@pytest.fixture
async def items_db(tmp_path: Path) -> AsyncIterator[Database]:
    db = await migrated("items", tmp_path)
    yield db
    await db.close()


@pytest.fixture
async def world(items_db: Database) -> World:
    box, config, a, types = await project_with_configuration(items_db, "MVA")
    projects = Projects(items_db, box, access_cache(), RecordingPlacer())
    with acting_as(ADMIN):
        b = await projects.create(ProjectInput(project_key="MVB", fields={"name": "B"}))
        folder = await projects.create(ProjectInput(is_folder=True, fields={"name": "Folder"}))
    access = access_cache(
        {
            WRITER_OF_A.user_id: {a: Role.READ_WRITE, b: Role.READ_ONLY},
            READER_OF_A.user_id: {a: Role.READ_ONLY},
        }
    )
    domain = Items(items_db, box, config, IdSpace(items_db), access)
    return World(
        items_db,
        domain,
        Moves(domain),
        Sync(domain, config),
        Tags(items_db, box, access),
        Releases(items_db, box, access),
        Relationships(items_db, box, config, access),
        a,
        b,
        folder,
        types,
    )
