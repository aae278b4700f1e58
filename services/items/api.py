"""items' gRPC servicer."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

import grpc

from plumbline.common.dates import format_datetime
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import page_of
from plumbline.core.v1 import core_pb2
from plumbline.items.v1 import items_pb2 as pb
from plumbline.items.v1 import items_pb2_grpc
from plumbline.services.items.config import Configuration
from plumbline.services.items.config_api import ConfigServicer
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.projects import ProjectInput, Projects

Ctx: TypeAlias = grpc.aio.ServicerContext


def project_message(row: Any) -> pb.Project:
    """A projects row as a message; ``fields`` carries name and projectKey too."""
    fields = json.loads(row.fields_json)
    fields["name"] = row.name
    if row.project_key is not None:
        fields["projectKey"] = row.project_key
    message = pb.Project(
        id=row.id,
        project_key=row.project_key or "",
        is_folder=row.is_folder,
        created_date=format_datetime(row.created_at),
        modified_date=format_datetime(row.modified_at),
        created_by=row.created_by,
        modified_by=row.modified_by,
        fields_json=json.dumps(fields).encode(),
    )
    if row.parent is not None:
        message.parent = row.parent
    return message


def _input(message: pb.ProjectInput) -> ProjectInput:
    fields = None
    if message.HasField("fields_json"):
        try:
            fields = json.loads(message.fields_json)
        except ValueError:
            raise InvalidArgument("fields must be a JSON object") from None
        if not isinstance(fields, dict):
            raise InvalidArgument("fields must be a JSON object")
    return ProjectInput(
        project_key=message.project_key if message.HasField("project_key") else None,
        is_folder=message.is_folder if message.HasField("is_folder") else None,
        parent=message.parent if message.HasField("parent") else None,
        clear_parent=message.clear_parent,
        fields=fields,
    )


class ItemsServicer(ConfigServicer, items_pb2_grpc.ItemsServicer):
    """Thin mapping onto projects, configuration and the id space."""

    def __init__(self, projects: Projects, ids: IdSpace, config: Configuration) -> None:
        self.projects = projects
        self.ids = ids
        self.config = config

    async def ListProjects(self, request: pb.ListProjectsRequest, context: Ctx) -> pb.ProjectPage:
        start, size = page_of(request.page)
        rows, total = await self.projects.page(start, size)
        info = core_pb2.PageInfo(start_index=start, result_count=len(rows), total_results=total)
        return pb.ProjectPage(projects=[project_message(r) for r in rows], page_info=info)

    async def GetProjects(self, request: core_pb2.IdList, context: Ctx) -> pb.ProjectList:
        rows = await self.projects.get_many(list(request.ids))
        return pb.ProjectList(projects=[project_message(r) for r in rows])

    async def CreateProject(self, request: pb.ProjectInput, context: Ctx) -> core_pb2.Created:
        return core_pb2.Created(id=await self.projects.create(_input(request)))

    async def UpdateProject(self, request: pb.UpdateProjectRequest, context: Ctx) -> core_pb2.Empty:
        await self.projects.update(request.id, _input(request.project))
        return core_pb2.Empty()

    async def AllocateIdBlock(self, request: pb.AllocateIdBlockRequest, context: Ctx) -> pb.IdBlock:
        first, size = await self.ids.allocate(request.owner)
        return pb.IdBlock(first_id=first, size=size, owner=request.owner)

    async def GetIdOwner(self, request: core_pb2.Id, context: Ctx) -> pb.IdOwner:
        return pb.IdOwner(owner=await self.ids.owner_of(request.id))

    async def GetWatermark(self, request: core_pb2.Empty, context: Ctx) -> core_pb2.Watermark:
        return core_pb2.Watermark(source="items", position=await self.projects.outbox.watermark())
