"""baselines' domain on SQLite: the history fed with owners' events as the bus would."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from plumbline.common.dates import format_datetime, utcnow
from plumbline.common.db import Database
from plumbline.common.events import Event
from plumbline.common.inbox import Inbox
from plumbline.services.baselines.history import History
from plumbline.services.baselines.models import consumed_events, consumer_positions
from tests.unit.services.conftest import access_cache, migrated

#: The consistency wait of these tests' history: long, so that a wait expected to end
#: never runs out on a busy machine; a test that waits it out sets ``SHORT`` first.
WAIT = 10.0
SHORT = 0.3
PROJECT = 7


@pytest.fixture
async def baselines_db(tmp_path: Path) -> AsyncIterator[Database]:
    db = await migrated("baselines", tmp_path)
    yield db
    await db.close()


@pytest.fixture
def history(baselines_db: Database) -> History:
    inbox = Inbox(baselines_db, consumed_events, consumer_positions)
    return History(baselines_db, inbox, WAIT, access_cache())


def fields_json(fields: dict[str, Any]) -> str:
    """A snapshot's ``fieldsJson`` member: a JSON object as protobuf JSON writes bytes."""
    return base64.b64encode(json.dumps(fields).encode()).decode()


@dataclass
class Owner:
    """The items service as the history sees it: its events, in position order."""

    history: History
    position: int = 0

    def _next(self) -> int:
        self.position += 1
        return self.position

    async def version(
        self,
        item: int,
        version: int,
        name: str = "",
        fields: dict[str, Any] | None = None,
        project: int = PROJECT,
    ) -> Event:
        """Records ``items.item.updated`` giving ``item`` its ``version``."""
        event = self.version_event(item, version, name, fields, project)
        await self.history.record(event)
        return event

    def version_event(
        self,
        item: int,
        version: int,
        name: str = "",
        fields: dict[str, Any] | None = None,
        project: int = PROJECT,
    ) -> Event:
        """The ``items.item.updated`` event giving ``item`` its ``version``, at the next
        position (for a batch)."""
        snapshot = {
            "id": str(item),
            "version": version,
            "name": name or f"item {item}",
            "modifiedDate": format_datetime(utcnow()),
            "fieldsJson": fields_json(fields or {}),
        }
        return Event(
            "items.item.updated" if version > 1 else "items.item.created",
            actor=1,
            project=project,
            object_ids=[item],
            version=version,
            payload={"snapshot": snapshot, "recordType": "plumbline.items.v1.Item"},
            position=self._next(),
        )

    def deletion_event(self, item: int) -> Event:
        """The ``items.item.deleted`` event of ``item``, at the next position."""
        return Event(
            "items.item.deleted",
            actor=1,
            project=PROJECT,
            object_ids=[item],
            payload={"deleted": True},
            position=self._next(),
        )

    async def relationship(
        self,
        action: str,
        rel: int,
        from_item: int,
        to_item: int,
        at: datetime,
        rel_type: int | None = 3,
        project: int = PROJECT,
    ) -> None:
        """Records ``items.relationship.<action>`` at ``at``."""
        await self.history.record(
            Event(
                f"items.relationship.{action}",
                actor=1,
                project=project,
                object_ids=[rel],
                payload={"fromItem": from_item, "toItem": to_item, "relationshipType": rel_type},
                time=format_datetime(at),
                position=self._next(),
            )
        )


@pytest.fixture
def owner(history: History) -> Owner:
    return Owner(history)
