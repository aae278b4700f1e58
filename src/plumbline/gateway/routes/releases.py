"""``/releases``: a project's releases."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common.errors import InvalidArgument
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import ReleaseBody
from plumbline.gateway.deps import Gw, Paging, Version, View, view_of
from plumbline.gateway.envelope import created, updated

router = APIRouter(prefix="/rest/{version}", tags=["releases"])

Releases = Annotated[View, Depends(view_of("releases"))]


@router.get(
    "/releases", summary="List a project's releases", responses=schemas.page(records.Release)
)
async def list_releases(
    view: Releases, gw: Gw, page: Paging, project: query.RequiredProject
) -> Response:
    reply = await gw.upstreams.items.releases.ListReleases(
        items_pb2.ListReleasesRequest(project=project, page=page.message())
    )
    return await view.many([representations.release(r) for r in reply.releases], reply.page_info)


@router.post("/releases", status_code=201, summary="Create a release", responses=schemas.created())
async def create_release(request: Request, body: ReleaseBody, version: Version, gw: Gw) -> Response:
    if body.project is None or body.name is None:
        missing = [n for n, v in (("name", body.name), ("project", body.project)) if v is None]
        raise InvalidArgument(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required."
        )
    view = View(request, gw, version, "releases")
    message = items_pb2.ReleaseInput(
        name=body.name, description=body.description or "", project=body.project
    )
    if body.releaseDate:
        message.release_date = body.releaseDate
    reply = await gw.upstreams.items.releases.CreateRelease(message)
    return created(reply.id, view.location(f"releases/{reply.id}"))


@router.get(
    "/releases/{releaseId}", summary="Get a release", responses=schemas.one(records.Release)
)
async def get_release(releaseId: int, view: Releases, gw: Gw) -> Response:
    reply = await gw.upstreams.items.releases.GetReleases(core_pb2.IdList(ids=[releaseId]))
    return await view.one(representations.release(reply.releases[0]))


@router.put("/releases/{releaseId}", summary="Update a release", responses=schemas.updated())
async def update_release(releaseId: int, body: ReleaseBody, gw: Gw) -> Response:
    values = body.model_dump(exclude_unset=True)
    message = items_pb2.ReleaseInput(id=releaseId)
    if values.get("name") is not None:
        message.name = values["name"]
    if "description" in values:
        message.description = values["description"] or ""
    if "releaseDate" in values:
        if values["releaseDate"]:
            message.release_date = values["releaseDate"]
        else:
            message.clear_release_date = True
    if values.get("project") is not None:
        message.project = values["project"]
    await gw.upstreams.items.releases.UpdateRelease(message)
    return updated()
