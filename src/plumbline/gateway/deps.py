"""What every route needs: the gateway, the API version, the caller; the version and
the caller are declared once per router (``AUTHENTICATED``, ``LABS``; see ``module.py``)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Path
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.common.context import Principal
from plumbline.common.errors import NotFound
from plumbline.common.settings import Settings
from plumbline.gateway import query
from plumbline.gateway.auth import Authenticator, caller
from plumbline.gateway.catalog import ItemTypeCache
from plumbline.gateway.cors import CorsPolicy
from plumbline.gateway.envelope import LinkTemplate, ok
from plumbline.gateway.includes import (
    LINKS,
    WITH_FIELDS,
    base_url,
    links_for,
    requested,
    resolve,
)
from plumbline.gateway.paging import DEFAULT_MAX_RESULTS, MAX_RESULTS, MAX_START, Page
from plumbline.gateway.upstreams import Upstreams

VERSIONS = ("v1", "latest", "labs")


@dataclass
class Gateway:
    """Set on ``app.state.gateway`` once the upstreams are connected."""

    settings: Settings
    upstreams: Upstreams
    auth: Authenticator
    catalog: ItemTypeCache
    cors: CorsPolicy


# Dependencies are coroutines even where they do not await: FastAPI runs a plain function
# dependency in a worker thread, a thread hop per dependency per request.


async def gateway(request: Request) -> Gateway:
    """The gateway of this app."""
    value: Gateway = request.app.state.gateway
    return value


async def api_version(version: Annotated[str, Path(description="v1, latest or labs")]) -> str:
    """The version segment; unknown versions are a 404."""
    if version not in VERSIONS:
        raise NotFound(f"Unknown API version {version!r}; available: {', '.join(VERSIONS)}.")
    return version


async def labs_version(version: Annotated[str, Depends(api_version)]) -> str:
    """Endpoints offered only under ``/rest/labs``."""
    if version != "labs":
        raise NotFound("This endpoint is offered under /rest/labs only.")
    return version


def serves(route: APIRoute, version: str) -> bool:
    """Whether a route is offered under ``version`` (labs-only routes are not under others)."""

    def labs_only(dependant: Dependant) -> bool:
        return any(d.call is labs_version or labs_only(d) for d in dependant.dependencies)

    return version == "labs" or not labs_only(route.dependant)


DATE_HEADERS = ("x-service-date-fields-with-time", "x-jama-date-fields-with-time")
#: Resources whose records' ``fields`` show dates as the date header asks.
DATED = ("items", "abstractitems", "testplans", "testcycles", "testruns", "attachments")


def dates_with_time(request: Request) -> bool:
    """Whether the caller wants dates in ``fields`` with a time part."""
    return any(request.headers.get(h, "").strip().lower() == "true" for h in DATE_HEADERS)


#: The date header as the description shows it on every route whose ``view_of`` answers
#: ``DATED`` records. It is declared in the document only (``openapi.py`` adds it where a
#: route's dependencies hold a view marked ``date_header``): the helpers that read the
#: records take it from the request with ``dates_with_time``, under either name, and a
#: FastAPI header parameter would cost every such request about 50 µs of CPU to parse a
#: value nothing uses.
DATE_HEADER_PARAMETER: dict[str, Any] = {
    "name": DATE_HEADERS[0],
    "in": "header",
    "required": False,
    "description": "true (in any capitalisation) for the DATE fields in fields with a time "
    "part, 2024-02-29T00:00:00.000+0000 instead of 2024-02-29; any other value, or none, "
    f"leaves them dates. {DATE_HEADERS[1]} is read the same way. A record as it was "
    "(asOf) keeps its dates.",
    "schema": {"type": "boolean", "default": False},
}


# A route under ``/rest/{version}`` does not declare the caller or the version check:
# ``install_routes`` (``module.py``) includes its router with ``AUTHENTICATED`` (or
# ``LABS``) as the router's dependencies. A handler names ``Version`` or ``Caller`` only
# to read the value; FastAPI resolves a dependency once per request, wherever declared.
Version = Annotated[str, Depends(api_version)]
Caller = Annotated[Principal, Depends(caller)]
Gw = Annotated[Gateway, Depends(gateway)]

#: The dependencies of a router of authenticated routes: the version segment is checked
#: (404 when unknown), then the caller is authenticated and made current for the gRPC
#: calls (``principal_var``). The version check comes first, as it did when every
#: handler named ``version`` before ``_c: Caller``.
AUTHENTICATED = [Depends(api_version), Depends(caller)]
#: The same for a router of routes offered under ``/rest/labs`` only.
LABS = [Depends(labs_version), Depends(caller)]
#: A labs-only route in a router whose other routes serve every version:
#: ``@router.post(..., dependencies=[LABS_ONLY])``.
LABS_ONLY = Depends(labs_version)


class View:
    """Builds the links and linked maps of one response.

    Routes that answer records get theirs from ``view_of``, which declares ``include``;
    routes that only need ``location`` build one.
    """

    def __init__(
        self,
        request: Request,
        gw: Gateway,
        version: str,
        resource: str,
        extra: dict[str, str] | None = None,
        include: Sequence[str] = (),
    ) -> None:
        self.request = request
        self.gw = gw
        self.version = version
        self.resource = resource
        self.extra = extra
        self.includes = requested(include, resource, extra)

    def links(self) -> dict[str, LinkTemplate]:
        """The ``links`` map."""
        return links_for(
            self.resource, self.request, self.version, self.gw.settings.public_url, self.extra
        )

    async def linked(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """The ``linked`` map for ``include``."""
        if not self.includes:
            return None
        known = {"itemtypes": await self.gw.catalog.item_types()}
        return await resolve(
            self.gw.upstreams, self.resource, self.includes, records, self.extra, known
        )

    async def one(self, record: Mapping[str, Any]) -> Response:
        """200 with one record, its links and any included records."""
        return ok(record, self.links(), await self.linked([record]))

    async def many(self, records: Sequence[Mapping[str, Any]], info: core_pb2.PageInfo) -> Response:
        """200 with a page of records and its ``pageInfo``."""
        page = (info.start_index, info.result_count, info.total_results)
        return ok(records, self.links(), await self.linked(records), page)

    def location(self, path: str) -> str:
        """Absolute URL of a record under this version."""
        base = base_url(self.request, self.gw.settings.public_url)
        return f"{base}/rest/{self.version}/{path}"


INCLUDE = "include"


def _include(resource: str) -> Callable[..., Awaitable[list[str]]] | None:
    """The ``include`` parameter of a resource's records (None when they link nothing)."""
    links = sorted(LINKS[resource])
    if resource in WITH_FIELDS:
        # Item types add a link per reference field, so the values cannot be listed here.
        return query.strings(
            INCLUDE,
            description="Referenced records to return in linked: "
            + ", ".join(links)
            + " or data.fields.<field name> for fields that refer to records.",
        )
    if not links:
        return None
    return query.strings(INCLUDE, description="Referenced records to return in linked.", enum=links)


def view_of(resource: str, *, dated: bool = True) -> Callable[..., Awaitable[View]]:
    """Dependency: the View of a route that answers ``resource`` records.

    It declares the route's ``include`` parameter with the links of that resource (routes
    of records with an item type's fields add the reference fields of every item type),
    and for ``DATED`` records the date header (``dated=False`` where the route answers
    records as they were, whose dates do not follow it).
    """
    include = _include(resource)

    async def view(
        request: Request,
        version: str,
        gw: Gateway,
        include: Sequence[str] = (),
    ) -> View:
        extra = await gw.catalog.field_links() if resource in WITH_FIELDS else None
        return View(request, gw, version, resource, extra, include)

    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter("request", keyword, annotation=Request),
        inspect.Parameter("version", keyword, annotation=str, default=Depends(api_version)),
        inspect.Parameter("gw", keyword, annotation=Gateway, default=Depends(gateway)),
    ]
    if include is not None:
        parameters.append(
            inspect.Parameter("include", keyword, annotation=list[str], default=Depends(include))
        )
    view.date_header = dated and resource in DATED  # type: ignore[attr-defined]
    # Built rather than written: whether there is an include parameter depends on resource.
    view.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return view


StartAt = Annotated[
    int,
    Depends(
        query.paging(
            "startAt",
            description="Index of the first record of the page.",
            minimum=0,
            maximum=MAX_START,
            default=0,
        )
    ),
]
MaxResults = Annotated[
    int,
    Depends(
        query.paging(
            "maxResults",
            description="Records per page.",
            minimum=1,
            maximum=MAX_RESULTS,
            default=DEFAULT_MAX_RESULTS,
        )
    ),
]


async def page(start_at: StartAt, max_results: MaxResults) -> Page:
    """Paging parameters of a list request."""
    return Page(start_at, max_results)


Paging = Annotated[Page, Depends(page)]
