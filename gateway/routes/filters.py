"""``/filters``: stored queries over items, their results and counts."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.core.v1 import core_pb2
from plumbline.gateway import params, representations
from plumbline.gateway.bodies import FavoriteFilterBody, FilterBody, free_json
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View, labs_version
from plumbline.gateway.envelope import created
from plumbline.gateway.routes.items import dates_with_time
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["filters"])


def _filter(message: items_pb2.Filter) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": message.id,
        "name": message.name,
        "author": message.author,
        "projectScope": message.project_scope,
    }
    if message.HasField("specified_project"):
        body["specifiedProject"] = message.specified_project
    body.update(
        {
            "filterQuery": orjson.loads(message.filter_query_json or b"{}"),
            "public": message.public,
            "type": "filters",
        }
    )
    return body


@router.get("/filters", summary="List the filters of a project")
async def list_filters(
    request: Request, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "filters")
    message = items_pb2.ListFiltersRequest(page=page.message())
    message.project = params.integer(request, "project", required=True) or 0
    author = params.integer(request, "author")
    if author is not None:
        message.author = author
    reply = await gw.upstreams.items.filters.ListFilters(message)
    return await view.many([_filter(f) for f in reply.filters], reply.page_info)


@router.get("/filters/{id}", summary="Get a filter")
async def get_filter(request: Request, id: int, version: Version, gw: Gw, _c: Caller) -> Response:
    view = View(request, gw, version, "filters")
    reply = await gw.upstreams.items.filters.GetFilters(core_pb2.IdList(ids=[id]))
    return await view.one(_filter(reply.filters[0]))


def _results_request(
    request: Request, id: int, page: Paging, count_only: bool
) -> items_pb2.FilterResultsRequest:
    message = items_pb2.FilterResultsRequest(
        filter=id,
        page=page.message(),
        dates_with_time=dates_with_time(request),
        count_only=count_only,
    )
    project = params.integer(request, "project")
    if project is not None:
        message.project = project
    return message


@router.get("/filters/{id}/results", summary="The items a filter finds")
async def results(
    request: Request, id: int, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = await View.of_items(request, gw, version)
    reply = await gw.upstreams.items.filters.FilterResults(
        _results_request(request, id, page, False)
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


@router.get("/filters/{filterId}/count", summary="How many items a filter finds")
async def count(
    request: Request, filterId: int, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "filtercounts")
    reply = await gw.upstreams.items.filters.FilterResults(
        _results_request(request, filterId, page, True)
    )
    return await view.one(
        {"count": reply.page_info.total_results, "filter": filterId, "type": "filtercounts"}
    )


@router.get("/users/current/favoritefilters", summary="The caller's favourite filters")
async def favorites(
    request: Request, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "filters")
    reply = await gw.upstreams.items.filters.ListFilters(
        items_pb2.ListFiltersRequest(favorites_only=True, page=page.message())
    )
    return await view.many([_filter(f) for f in reply.filters], reply.page_info)


@router.post("/filters", status_code=201, summary="Create a filter (labs)")
async def create_filter(
    request: Request, body: FilterBody, gw: Gw, _c: Caller, version: str = Depends(labs_version)
) -> Response:
    view = View(request, gw, version, "filters")
    message = items_pb2.Filter(
        name=body.name,
        project_scope=body.projectScope,
        filter_query_json=free_json(body.filterQuery, "filterQuery"),
        public=body.public,
    )
    if body.specifiedProject is not None:
        message.specified_project = body.specifiedProject
    reply = await gw.upstreams.items.filters.CreateFilter(message)
    return created(reply.id, view.location(f"filters/{reply.id}"))


@router.post("/users/current/favoritefilters", status_code=201, summary="Favour a filter (labs)")
async def add_favorite(
    request: Request,
    body: FavoriteFilterBody,
    gw: Gw,
    _c: Caller,
    version: str = Depends(labs_version),
) -> Response:
    view = View(request, gw, version, "filters")
    await gw.upstreams.items.filters.AddFavoriteFilter(core_pb2.Id(id=body.filter))
    return created(body.filter, view.location(f"filters/{body.filter}"))
