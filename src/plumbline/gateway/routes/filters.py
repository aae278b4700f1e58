"""``/filters``: stored queries over items, their results and counts."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common.jsonvalues import free_json
from plumbline.gateway import params, query, records, representations, schemas
from plumbline.gateway.bodies import FavoriteFilterBody, FilterBody
from plumbline.gateway.deps import (
    LABS_ONLY,
    Gw,
    Paging,
    Version,
    View,
    dates_with_time,
    view_of,
)
from plumbline.gateway.envelope import created

router = APIRouter(prefix="/rest/{version}", tags=["filters"])

Filters = Annotated[View, Depends(view_of("filters"))]
Items = Annotated[View, Depends(view_of("items"))]
Counts = Annotated[View, Depends(view_of("filtercounts"))]
Author = Annotated[
    int | None, Depends(query.integer("author", description="Only filters of this user."))
]


def _in_project(request: Request) -> int | None:
    return params.integer(request.query_params.getlist("project"), "project")


# Read by _results_request, which both routes share.
InProject = Annotated[
    int | None,
    Depends(
        query.from_request(
            "project",
            query.INT64,
            _in_project,
            description="The project of a filter whose scope is CURRENT.",
        )
    ),
]


@router.get(
    "/filters", summary="List the filters of a project", responses=schemas.page(records.Filter)
)
async def list_filters(
    view: Filters,
    gw: Gw,
    page: Paging,
    project: query.RequiredProject,
    author: Author,
) -> Response:
    message = items_pb2.ListFiltersRequest(page=page.message())
    message.project = project
    if author is not None:
        message.author = author
    reply = await gw.upstreams.items.filters.ListFilters(message)
    return await view.many([representations.item_filter(f) for f in reply.filters], reply.page_info)


@router.get("/filters/{id}", summary="Get a filter", responses=schemas.one(records.Filter))
async def get_filter(id: int, view: Filters, gw: Gw) -> Response:
    reply = await gw.upstreams.items.filters.GetFilters(core_pb2.IdList(ids=[id]))
    return await view.one(representations.item_filter(reply.filters[0]))


def _results_request(
    request: Request, id: int, page: Paging, count_only: bool
) -> items_pb2.FilterResultsRequest:
    message = items_pb2.FilterResultsRequest(
        filter=id,
        page=page.message(),
        dates_with_time=dates_with_time(request),
        count_only=count_only,
    )
    project = _in_project(request)
    if project is not None:
        message.project = project
    return message


@router.get(
    "/filters/{id}/results",
    summary="The items a filter finds",
    responses=schemas.page(records.Item),
)
async def results(
    request: Request, id: int, view: Items, gw: Gw, page: Paging, _p: InProject
) -> Response:
    reply = await gw.upstreams.items.filters.FilterResults(
        _results_request(request, id, page, False)
    )
    return await view.many([representations.item(i) for i in reply.items], reply.page_info)


@router.get(
    "/filters/{filterId}/count",
    summary="How many items a filter finds",
    responses=schemas.one(records.FilterCount),
)
async def count(
    request: Request,
    filterId: int,
    view: Counts,
    gw: Gw,
    page: Paging,
    _p: InProject,
) -> Response:
    reply = await gw.upstreams.items.filters.FilterResults(
        _results_request(request, filterId, page, True)
    )
    found: records.FilterCount = {
        "count": reply.page_info.total_results,
        "filter": filterId,
        "type": "filtercounts",
    }
    return await view.one(found)


@router.get(
    "/users/current/favoritefilters",
    summary="The caller's favourite filters",
    responses=schemas.page(records.Filter),
)
async def favorites(view: Filters, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.items.filters.ListFilters(
        items_pb2.ListFiltersRequest(favorites_only=True, page=page.message())
    )
    return await view.many([representations.item_filter(f) for f in reply.filters], reply.page_info)


@router.post(
    "/filters",
    status_code=201,
    summary="Create a filter (labs)",
    responses=schemas.created(),
    dependencies=[LABS_ONLY],
)
async def create_filter(request: Request, body: FilterBody, gw: Gw, version: Version) -> Response:
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


@router.post(
    "/users/current/favoritefilters",
    status_code=201,
    summary="Favour a filter (labs)",
    responses=schemas.created(),
    dependencies=[LABS_ONLY],
)
async def add_favorite(
    request: Request,
    body: FavoriteFilterBody,
    gw: Gw,
    version: Version,
) -> Response:
    view = View(request, gw, version, "filters")
    await gw.upstreams.items.filters.AddFavoriteFilter(core_pb2.Id(id=body.filter))
    return created(body.filter, view.location(f"filters/{body.filter}"))
