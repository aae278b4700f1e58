"""``plumbline.items.v1.Baselining`` and ``plumbline.core.v1.Snapshots`` for items."""

from __future__ import annotations

from plumbline.common.dates import format_datetime
from plumbline.common.rpc import Context, optional
from plumbline.common.snapshots import snapshot_json, snapshot_payload
from plumbline.core.v1 import core_pb2, core_pb2_grpc
from plumbline.items.v1 import items_pb2 as pb
from plumbline.items.v1 import items_pb2_grpc
from plumbline.services.items.baselining import Baselining, Origin
from plumbline.services.items.messages import item_message

#: The most snapshots one call answers.
MAX_SNAPSHOTS = 1000


class BaseliningServicer(items_pb2_grpc.BaseliningServicer):
    """Thin mapping onto ``Baselining.members``."""

    def __init__(self, baselining: Baselining) -> None:
        self.baselining = baselining

    async def ListMembers(self, request: pb.MembersRequest, context: Context) -> pb.MemberList:
        found = await self.baselining.members(
            Origin(
                project=request.project,
                item=optional(request, "item"),
                filter=optional(request, "filter"),
                release=optional(request, "release"),
                items=tuple(request.items),
            )
        )
        members = []
        for m in found:
            member = pb.Member(
                id=m.id,
                version=m.version,
                project=m.project,
                sequence=m.sequence,
                parent_version=m.parent_version,
            )
            if m.parent_item is not None:
                member.parent_item = m.parent_item
            members.append(member)
        return pb.MemberList(members=members)


class SnapshotsServicer(core_pb2_grpc.SnapshotsServicer):
    """Every active item as the history keeps it."""

    def __init__(self, baselining: Baselining) -> None:
        self.baselining = baselining

    async def ListSnapshots(
        self, request: core_pb2.ListSnapshotsRequest, context: Context
    ) -> core_pb2.SnapshotPage:
        limit = min(request.limit or MAX_SNAPSHOTS, MAX_SNAPSHOTS)
        rows, catalog, more = await self.baselining.snapshots(request.after, limit)
        page = core_pb2.SnapshotPage(more=more)
        for row in rows:
            payload = snapshot_payload(item_message(row, catalog, False, None))
            page.snapshots.append(
                core_pb2.Snapshot(
                    id=row.id,
                    version=row.version,
                    project=row.project,
                    record_type=payload["recordType"],
                    snapshot_json=snapshot_json(payload["snapshot"]),
                    modified_date=format_datetime(row.modified_at),
                    modified_by=row.modified_by,
                )
            )
        return page
