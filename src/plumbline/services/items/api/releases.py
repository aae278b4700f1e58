"""``plumbline.items.v1.Releases``."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.dates import format_datetime
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.items.releases import Releases


def release_message(row: Any) -> pb.Release:
    """A releases row (with its item count) as a message."""
    when = row.release_date
    return message_of(row, pb.Release, release_date=format_datetime(when) if when else None)


class ReleasesServicer(items_pb2_grpc.ReleasesServicer):
    """Thin mapping onto ``Releases``."""

    def __init__(self, releases: Releases) -> None:
        self.releases = releases

    async def ListReleases(
        self, request: pb.ListReleasesRequest, context: Context
    ) -> pb.ReleasePage:
        start, size = page_of(request.page)
        rows, total = await self.releases.page(request.project, start, size)
        return pb.ReleasePage(
            releases=[release_message(r) for r in rows],
            page_info=page_info(start, len(rows), total),
        )

    async def GetReleases(self, request: core_pb2.IdList, context: Context) -> pb.ReleaseList:
        rows = await self.releases.get_many(list(request.ids))
        return pb.ReleaseList(releases=[release_message(r) for r in rows])

    async def CreateRelease(self, request: pb.ReleaseInput, context: Context) -> core_pb2.Created:
        new_id = await self.releases.create(
            request.name,
            request.description,
            optional(request, "release_date"),
            request.project,
        )
        return core_pb2.Created(id=new_id)

    async def UpdateRelease(self, request: pb.ReleaseInput, context: Context) -> core_pb2.Empty:
        values: dict[str, Any] = {
            name: getattr(request, name)
            for name in ("name", "description", "release_date", "project")
            if request.HasField(name)
        }
        values["clear_release_date"] = request.clear_release_date
        await self.releases.update(request.id, values)
        return core_pb2.Empty()
