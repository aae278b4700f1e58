"""``plumbline.baselines.v1.Baselines``."""

from __future__ import annotations

from typing import Any

from plumbline.api.baselines.v1 import baselines_pb2 as pb
from plumbline.api.baselines.v1 import baselines_pb2_grpc
from plumbline.api.core.v1 import core_pb2
from plumbline.common.dates import format_datetime
from plumbline.common.inbox import targets
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.baselines.api.versions import relationship_messages, version_message
from plumbline.services.baselines.baselines import Baselines, Origin, Placed
from plumbline.services.baselines.folders import Folders


def baseline_message(row: Any) -> pb.Baseline:
    """A baselines row as a message."""
    origin = {"item": row.origin_item, "filter": row.origin_filter, "release": row.origin_release}
    return message_of(row, pb.Baseline, created_date=format_datetime(row.created_at), origin=origin)


def folder_message(row: Any) -> pb.Folder:
    """A baseline_folders row as a message."""
    return message_of(row, pb.Folder, created_date=format_datetime(row.created_at))


def baseline_item_message(placed: Placed) -> pb.BaselineItem:
    """An item of a baseline: its version there, the record then, where it was."""
    return message_of(
        placed.row,
        pb.BaselineItem,
        version=version_message(placed.version, placed.history, with_snapshot=True),
        project=placed.version.project,
    )


class BaselinesServicer(baselines_pb2_grpc.BaselinesServicer):
    """Thin mapping onto ``Baselines``."""

    def __init__(self, baselines: Baselines, folders: Folders) -> None:
        self.baselines = baselines
        self.folders = folders

    async def CreateBaseline(self, request: pb.BaselineInput, context: Context) -> core_pb2.Created:
        origin = request.origin
        baseline_id = await self.baselines.create(
            request.project,
            request.name,
            request.description,
            Origin(
                item=optional(origin, "item"),
                filter=optional(origin, "filter"),
                release=optional(origin, "release"),
                items=tuple(origin.items),
            ),
        )
        return core_pb2.Created(id=baseline_id)

    async def ListBaselines(
        self, request: pb.ListBaselinesRequest, context: Context
    ) -> pb.BaselinePage:
        start, size = page_of(request.page)
        rows, total = await self.baselines.page(request.project, start, size)
        return pb.BaselinePage(
            baselines=[baseline_message(r) for r in rows],
            page_info=page_info(start, len(rows), total),
        )

    async def GetBaseline(self, request: core_pb2.Id, context: Context) -> pb.Baseline:
        return baseline_message(await self.baselines.get(request.id))

    async def ListBaselineItems(
        self, request: pb.ListBaselineItemsRequest, context: Context
    ) -> pb.BaselineItemPage:
        start, size = page_of(request.page)
        found, total = await self.baselines.items(request.baseline, start, size)
        return pb.BaselineItemPage(
            items=[baseline_item_message(p) for p in found],
            page_info=page_info(start, len(found), total),
        )

    async def GetBaselineItem(
        self, request: pb.BaselineItemRequest, context: Context
    ) -> pb.BaselineItem:
        return baseline_item_message(await self.baselines.item(request.baseline, request.item))

    async def ListBaselineRelationships(
        self, request: pb.BaselineItemRequest, context: Context
    ) -> pb.VersionedRelationshipPage:
        await self.baselines.history.caught_up(targets(request.wait_for))
        start, size = page_of(request.page)
        found, total = await self.baselines.relationships(
            request.baseline, request.item, start, size
        )
        return pb.VersionedRelationshipPage(
            relationships=relationship_messages(found),
            page_info=page_info(start, len(found), total),
        )

    async def Compare(self, request: pb.CompareRequest, context: Context) -> pb.ComparePage:
        await self.baselines.history.caught_up(targets(request.wait_for))
        start, size = page_of(request.page)
        changes, total = await self.baselines.compare(
            request.baseline, optional(request, "to"), start, size
        )
        return pb.ComparePage(
            changes=[message_of(c, pb.Change) for c in changes],
            page_info=page_info(start, len(changes), total),
        )

    async def CreateFolder(self, request: pb.FolderInput, context: Context) -> core_pb2.Created:
        folder = await self.folders.create(
            request.project, request.name, optional(request, "parent")
        )
        return core_pb2.Created(id=folder)

    async def ListFolders(self, request: pb.ListFoldersRequest, context: Context) -> pb.FolderPage:
        start, size = page_of(request.page)
        rows, total = await self.folders.page(request.project, start, size)
        return pb.FolderPage(
            folders=[folder_message(r) for r in rows],
            page_info=page_info(start, len(rows), total),
        )

    async def UpdateBaseline(self, request: pb.BaselineUpdate, context: Context) -> core_pb2.Empty:
        await self.baselines.update(request.id, request.name, request.description)
        return core_pb2.Empty()

    async def MoveBaseline(
        self, request: pb.MoveBaselineRequest, context: Context
    ) -> core_pb2.Empty:
        await self.folders.move(request.project, request.baseline, optional(request, "folder"))
        return core_pb2.Empty()
