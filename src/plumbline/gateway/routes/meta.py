"""``GET /rest`` and ``GET /rest/{version}``: what the API offers."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from plumbline.gateway import records, schemas
from plumbline.gateway.deps import VERSIONS, Gw, Version, serves
from plumbline.gateway.envelope import ok
from plumbline.gateway.includes import base_url

#: ``GET /rest``, which needs no credentials.
public = APIRouter(tags=["meta"])
#: ``GET /rest/{version}``, included with the authenticated routers.
router = APIRouter(tags=["meta"])


@public.get(
    "/rest",
    summary="List the API versions",
    responses=schemas.page(records.Version),
    openapi_extra={"security": []},  # no credentials needed
)
async def versions(request: Request, gw: Gw) -> Response:
    base = base_url(request, gw.settings.public_url)
    data: list[records.Version] = [
        {"name": v, "href": f"{base}/rest/{v}/", "status": _status(v), "type": "versions"}
        for v in VERSIONS
    ]
    return ok(data, page=(0, len(data), len(data)))


def _status(version: str) -> str:
    return {"v1": "CURRENT", "latest": "DEPRECATED", "labs": "UNSUPPORTED"}[version]


@router.get(
    "/rest/{version}",
    summary="List the resources of this API version",
    responses=schemas.page(records.Endpoint),
)
async def endpoints(request: Request, version: Version, gw: Gw) -> Response:
    base = base_url(request, gw.settings.public_url)
    prefix = "/rest/{version}/"
    names = sorted(
        {
            route.path[len(prefix) :].split("/")[0]
            for route in request.app.routes
            if isinstance(route, APIRoute)
            and route.path.startswith(prefix)
            and serves(route, version)
        }
    )
    data: list[records.Endpoint] = [
        {"name": n, "href": f"{base}/rest/{version}/{n}", "type": "endpoints"} for n in names
    ]
    return ok(data, page=(0, len(data), len(data)))
