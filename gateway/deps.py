"""What every route needs: the gateway, the API version, the caller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Path
from starlette.requests import Request
from starlette.responses import Response

from plumbline.common.context import Principal, principal_var
from plumbline.common.errors import NotFound
from plumbline.common.settings import Settings
from plumbline.core.v1 import core_pb2
from plumbline.gateway.auth import Authenticator
from plumbline.gateway.catalog import ItemTypeCache
from plumbline.gateway.envelope import ok
from plumbline.gateway.includes import links_for, requested, resolve
from plumbline.gateway.paging import Page, parse_page
from plumbline.gateway.upstreams import Upstreams

VERSIONS = ("v1", "latest", "labs")


@dataclass
class Gateway:
    """Set on ``app.state.gateway`` once the upstreams are connected."""

    settings: Settings
    upstreams: Upstreams
    auth: Authenticator
    catalog: ItemTypeCache


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


async def caller(request: Request, gw: Annotated[Gateway, Depends(gateway)]) -> Principal:
    """Authenticates the request and makes the caller current for gRPC calls.

    The middleware has usually verified the credentials already (before routing).
    """
    principal: Principal | None = getattr(request.state, "principal", None)
    if principal is None:
        principal = await gw.auth.authenticate(request)
    principal_var.set(principal)
    return principal


Version = Annotated[str, Depends(api_version)]
Caller = Annotated[Principal, Depends(caller)]
Gw = Annotated[Gateway, Depends(gateway)]


class View:
    """Builds the links and linked maps of one response."""

    def __init__(
        self,
        request: Request,
        gw: Gateway,
        version: str,
        resource: str,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.request = request
        self.gw = gw
        self.version = version
        self.resource = resource
        self.extra = extra
        self.includes = requested(request, resource, extra)

    @classmethod
    async def of_items(cls, request: Request, gw: Gateway, version: str) -> View:
        """A view of items: links include every reference field of the item types."""
        return cls(request, gw, version, "items", await gw.catalog.field_links())

    def links(self) -> dict[str, Any]:
        """The ``links`` map."""
        return links_for(
            self.resource, self.request, self.version, self.gw.settings.public_url, self.extra
        )

    async def linked(self, records: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The ``linked`` map for ``include``."""
        if not self.includes:
            return None
        known = {"itemtypes": await self.gw.catalog.item_types()}
        return await resolve(
            self.gw.upstreams, self.resource, self.includes, records, self.extra, known
        )

    async def one(self, record: dict[str, Any]) -> Response:
        """200 with one record, its links and any included records."""
        return ok(record, self.links(), await self.linked([record]))

    async def many(self, records: list[dict[str, Any]], info: core_pb2.PageInfo) -> Response:
        """200 with a page of records and its ``pageInfo``."""
        page = (info.start_index, info.result_count, info.total_results)
        return ok(records, self.links(), await self.linked(records), page)

    def location(self, path: str) -> str:
        """Absolute URL of a record under this version."""
        from plumbline.gateway.includes import base_url

        base = base_url(self.request, self.gw.settings.public_url)
        return f"{base}/rest/{self.version}/{path}"


async def page(request: Request) -> Page:
    """Paging parameters of a list request."""
    return parse_page(request)


Paging = Annotated[Page, Depends(page)]
