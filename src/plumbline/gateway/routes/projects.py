"""``/projects``."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common.errors import PlumblineError, Unavailable
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import ProjectBody, RecordId
from plumbline.gateway.deps import Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, updated

router = APIRouter(prefix="/rest/{version}", tags=["projects"])

Projects = Annotated[View, Depends(view_of("projects"))]


def _input(body: ProjectBody) -> items_pb2.ProjectInput:
    values = body.model_dump(exclude_unset=True)
    message = items_pb2.ProjectInput()
    if values.get("projectKey") is not None:
        message.project_key = values["projectKey"]
    if values.get("isFolder") is not None:
        message.is_folder = values["isFolder"]
    if "parent" in values:
        if values["parent"] is None:
            message.clear_parent = True
        else:
            message.parent = values["parent"]
    if "fields" in values:
        fields = {k: v for k, v in values["fields"].items()}
        message.fields_json = json.dumps(fields).encode()
    return message


@router.get("/projects", summary="List projects", responses=schemas.page(records.Project))
async def list_projects(view: Projects, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.projects.ListProjects(
        items_pb2.ListProjectsRequest(page=page.message())
    )
    data = [representations.project(p) for p in reply.projects]
    return await view.many(data, reply.page_info)


@router.post(
    "/projects",
    status_code=201,
    summary="Create a project or project folder",
    responses=schemas.created(),
)
async def create_project(request: Request, body: ProjectBody, version: Version, gw: Gw) -> Response:
    view = View(request, gw, version, "projects")
    reply = await gw.upstreams.items.projects.CreateProject(_input(body))
    try:
        await gw.upstreams.identity.permissions.GrantCreator(core_pb2.Id(id=reply.id))
        await gw.upstreams.settle_access()
    except PlumblineError as exc:
        raise Unavailable(
            f"Project {reply.id} was created, but making you its administrator failed "
            f"({exc.message}); an organization administrator can grant you a role on it."
        ) from exc
    return created(reply.id, view.location(f"projects/{reply.id}"))


@router.get(
    "/projects/{projectId}", summary="Get a project", responses=schemas.one(records.Project)
)
async def get_project(projectId: RecordId, view: Projects, gw: Gw) -> Response:
    reply = await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=[projectId]))
    data = representations.project(reply.projects[0])
    return await view.one(data)


@router.put("/projects/{projectId}", summary="Update a project", responses=schemas.updated())
async def update_project(projectId: RecordId, body: ProjectBody, gw: Gw) -> Response:
    await gw.upstreams.items.projects.UpdateProject(
        items_pb2.UpdateProjectRequest(id=projectId, project=_input(body))
    )
    await gw.upstreams.settle_access()  # a new parent folder brings its entries
    return updated()
