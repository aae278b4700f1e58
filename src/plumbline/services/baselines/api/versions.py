"""``plumbline.baselines.v1.Versions`` and ``VersionedRelationships``."""

from __future__ import annotations

import json
from typing import Any

from plumbline.api.baselines.v1 import baselines_pb2 as pb
from plumbline.api.baselines.v1 import baselines_pb2_grpc
from plumbline.common.dates import format_datetime, parse_datetime
from plumbline.common.inbox import targets
from plumbline.common.rpc import Context, message_of, page_info, page_of
from plumbline.services.baselines.history import History, RelationshipAt, change_details


def version_message(row: Any, history: Any, with_snapshot: bool = False) -> pb.Version:
    """A versions row as a message (with the record then, when asked)."""
    return message_of(
        row,
        pb.Version,
        version_number=row.version,
        change_details=change_details(row.version, row.changed),
        created_date=format_datetime(row.created_at),
        current_version=None if history.deleted else history.latest,
        snapshot_json=row.snapshot.encode() if with_snapshot else None,
        # The row's categories are JSON text.
        categories=json.loads(row.categories or "[]") if with_snapshot else None,
    )


class VersionsServicer(baselines_pb2_grpc.VersionsServicer):
    """Thin mapping onto the history."""

    def __init__(self, history: History) -> None:
        self.history = history

    async def ListVersions(
        self, request: pb.ListVersionsRequest, context: Context
    ) -> pb.VersionPage:
        start, size = page_of(request.page)
        subject = request.subject
        rows, total, history = await self.history.page(
            subject.item, subject.known_version, start, size
        )
        return pb.VersionPage(
            versions=[version_message(r, history) for r in rows],
            page_info=page_info(start, len(rows), total),
        )

    async def GetVersion(self, request: pb.GetVersionRequest, context: Context) -> pb.Version:
        subject = request.subject
        row, history = await self.history.get(
            subject.item, subject.known_version, request.version_number
        )
        return version_message(row, history, with_snapshot=True)

    async def GetAsOf(self, request: pb.GetAsOfRequest, context: Context) -> pb.Version:
        subject = request.subject
        moment = parse_datetime(request.as_of, "asOf")
        row, history = await self.history.as_of(subject.item, subject.known_version, moment)
        return version_message(row, history, with_snapshot=True)


class VersionedRelationshipsServicer(baselines_pb2_grpc.VersionedRelationshipsServicer):
    """Relationships as they were."""

    def __init__(self, history: History) -> None:
        self.history = history

    async def ListAt(
        self, request: pb.ListRelationshipsAtRequest, context: Context
    ) -> pb.VersionedRelationshipPage:
        await self.history.caught_up(targets(request.wait_for))
        start, size = page_of(request.page)
        subject = request.subject
        moment = parse_datetime(request.timestamp, "timestamp")
        found, total = await self.history.relationships_at(
            subject.item, subject.known_version, moment, start, size
        )
        return pb.VersionedRelationshipPage(
            relationships=relationship_messages(found),
            page_info=page_info(start, len(found), total),
        )


def relationship_messages(found: list[RelationshipAt]) -> list[pb.VersionedRelationship]:
    """Relationships as they were, as messages."""
    return [message_of(r, pb.VersionedRelationship) for r in found]
