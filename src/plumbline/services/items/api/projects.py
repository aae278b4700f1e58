"""``plumbline.items.v1.Projects``: projects and folders."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.dates import format_datetime
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.items.config import Configuration
from plumbline.services.items.imports import Importer
from plumbline.services.items.projects import ProjectInput, Projects


def project_message(row: Any) -> pb.Project:
    """A projects row as a message; ``fields`` carries name and projectKey too."""
    fields = json.loads(row.fields_json)
    fields["name"] = row.name
    if row.project_key is not None:
        fields["projectKey"] = row.project_key
    return message_of(
        row,
        pb.Project,
        created_date=format_datetime(row.created_at),
        modified_date=format_datetime(row.modified_at),
        fields_json=json.dumps(fields).encode(),
    )


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
        project_key=optional(message, "project_key"),
        is_folder=optional(message, "is_folder"),
        parent=optional(message, "parent"),
        clear_parent=message.clear_parent,
        fields=fields,
    )


class ProjectsServicer(items_pb2_grpc.ProjectsServicer):
    """Thin mapping onto ``Projects``."""

    def __init__(self, projects: Projects, config: Configuration, importer: Importer) -> None:
        self.projects = projects
        self.config = config
        self.importer = importer

    async def ImportItems(
        self, request_iterator: AsyncIterator[pb.ImportChunk], context: Context
    ) -> pb.ImportReply:
        first = await anext(request_iterator, None)
        if first is None or not first.project:
            raise InvalidArgument("the import's first chunk must name the project")

        async def chunks() -> AsyncIterator[bytes]:
            yield first.data
            async for chunk in request_iterator:
                yield chunk.data

        done = await self.importer.run(first.project, chunks())
        return pb.ImportReply(
            lines=done.lines,
            items=done.items,
            relationships=done.relationships,
            first_item_id=done.first_item_id,
            versions=done.versions,
            deleted=done.deleted,
            relationships_deleted=done.relationships_deleted,
            bad=[pb.ImportBadLine(line=line, message=message) for line, message in done.bad],
            bad_count=done.bad_count,
        )

    async def ListProjects(
        self, request: pb.ListProjectsRequest, context: Context
    ) -> pb.ProjectPage:
        start, size = page_of(request.page)
        rows, total = await self.projects.page(start, size)
        info = page_info(start, len(rows), total)
        return pb.ProjectPage(projects=[project_message(r) for r in rows], page_info=info)

    async def GetProjects(self, request: core_pb2.IdList, context: Context) -> pb.ProjectList:
        rows = await self.projects.get_many(list(request.ids))
        return pb.ProjectList(projects=[project_message(r) for r in rows])

    async def CreateProject(self, request: pb.ProjectInput, context: Context) -> core_pb2.Created:
        return core_pb2.Created(id=await self.projects.create(_input(request)))

    async def UpdateProject(
        self, request: pb.UpdateProjectRequest, context: Context
    ) -> core_pb2.Empty:
        await self.projects.update(request.id, _input(request.project))
        return core_pb2.Empty()

    async def AddProjectItemType(
        self, request: pb.ProjectItemTypeRequest, context: Context
    ) -> core_pb2.Empty:
        catalog = await self.config.catalog()
        await self.projects.add_item_type(request.project, request.item_type, catalog.item_types)
        return core_pb2.Empty()
