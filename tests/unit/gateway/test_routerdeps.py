"""Router-level dependencies: ``install_routes`` includes every router of ``/rest/{version}``
routes with the version check and the caller (``deps.AUTHENTICATED`` or ``deps.LABS``), so
no handler has to name them, and a route that forgets them cannot be added unnoticed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import httpx
from fastapi import APIRouter, FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.requests import Request

from plumbline.common.context import (
    USER_ID_KEY,
    USERNAME_KEY,
    Principal,
    principal_var,
    to_metadata,
)
from plumbline.common.errors import Unauthenticated
from plumbline.gateway import errors
from plumbline.gateway.auth import caller
from plumbline.gateway.deps import AUTHENTICATED, Caller, Version, api_version
from plumbline.gateway.module import install_routes

#: The routes under /rest that need no credentials (the middleware's ``_PUBLIC_PATHS`` and
#: ``GET /rest``, which is not under /rest/).
PUBLIC = {("GET", "/rest"), ("POST", "/rest/oauth/token")}
BASIC = {"Authorization": "Basic YWxpY2U6cHc="}


class CountingAuthenticator:
    """Any Authorization header is alice; none is a 401. Counts the authentications."""

    def __init__(self) -> None:
        self.calls = 0

    async def authenticate(self, request: Request) -> Principal:
        self.calls += 1
        if "authorization" not in request.headers:
            raise Unauthenticated("Authentication is required.")
        return Principal(7, "alice")


class Services:
    """The upstreams' stubs: every call records the metadata the gRPC client would send
    (``to_metadata``, what its interceptor adds) and answers an empty reply."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, str]]] = []

    def __getattr__(self, name: str) -> Stub:
        return Stub(self, name)


class Stub:
    def __init__(self, services: Services, name: str) -> None:
        self.services = services
        self.name = name

    def __getattr__(self, name: str) -> Stub:
        return Stub(self.services, f"{self.name}.{name}")

    async def __call__(self, request: Any) -> Any:
        self.services.calls.append((self.name, dict(to_metadata())))
        return request


def _app() -> tuple[FastAPI, CountingAuthenticator, Services]:
    """The gateway's routes, without the middleware (which would authenticate first)."""
    app = FastAPI()
    install_routes(app)
    auth, services = CountingAuthenticator(), Services()
    app.state.gateway = SimpleNamespace(
        settings=SimpleNamespace(public_url=None), upstreams=services, auth=auth
    )
    return app, auth, services


async def _request(
    app: FastAPI, method: str, url: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.request(method, url, headers=headers)

    # In a task of its own, as a server runs each request: a context variable the request
    # sets cannot leak into the next one (or into this test) and pass for its own.
    return await asyncio.create_task(send())


def _calls(dependant: Dependant) -> Iterator[Callable[..., Any]]:
    """Every dependency a request to the route resolves."""
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from _calls(sub)


def _api_routes(app: FastAPI) -> Iterator[tuple[str, str, set[Callable[..., Any]]]]:
    for route in app.routes:
        if isinstance(route, APIRoute) and route.path.startswith("/rest"):
            for method in sorted(route.methods):
                yield method, route.path, set(_calls(route.dependant))


def unguarded(app: FastAPI) -> list[str]:
    """The routes under /rest, public ones aside, that are served without authenticating
    the caller or, under /rest/{version}, without checking the version."""
    return [
        f"{method} {path}"
        for method, path, calls in _api_routes(app)
        if (method, path) not in PUBLIC
        and (
            caller not in calls or (path.startswith("/rest/{version}") and api_version not in calls)
        )
    ]


def test_every_api_route_checks_the_version_and_authenticates_the_caller() -> None:
    app = FastAPI()
    install_routes(app)
    assert unguarded(app) == []


def test_the_public_routes_are_the_ones_declared() -> None:
    app = FastAPI()
    install_routes(app)
    public = {(method, path) for method, path, calls in _api_routes(app) if caller not in calls}
    assert public == PUBLIC


def test_a_router_included_without_the_dependencies_is_found() -> None:
    forgotten = APIRouter(prefix="/rest/{version}")

    @forgotten.get("/forgotten")
    async def handler(version: Version) -> dict[str, str]:
        return {}

    app = FastAPI()
    install_routes(app)
    app.include_router(forgotten)
    assert unguarded(app) == ["GET /rest/{version}/forgotten"]


async def test_the_routers_caller_reaches_the_services_of_a_handler_that_names_none() -> None:
    # DELETE /testruns/{id}'s handler takes the id and the gateway only.
    app, auth, services = _app()
    assert principal_var.get() is None
    answer = await _request(app, "DELETE", "/rest/v1/testruns/5", BASIC)
    assert answer.status_code == 204, answer.text
    [(name, metadata)] = services.calls
    assert name == "testmgmt.runs.DeleteRun"
    assert (metadata[USER_ID_KEY], metadata[USERNAME_KEY]) == ("7", "alice")
    assert auth.calls == 1
    assert principal_var.get() is None


async def test_without_credentials_no_service_is_called() -> None:
    app, _, services = _app()
    answer = await _request(app, "DELETE", "/rest/v1/testruns/5")
    assert answer.status_code == 401
    assert services.calls == []


async def test_the_version_is_checked_before_the_caller() -> None:
    # Today's order: the handlers named version before the caller. Behind the middleware a
    # missing credential is a 401 before routing; here, without it, the 404 wins.
    app, auth, services = _app()
    answer = await _request(app, "DELETE", "/rest/v9/testruns/5")
    assert answer.status_code == 404
    assert "Unknown API version" in answer.json()["meta"]["message"]
    answer = await _request(app, "GET", "/rest/v1/categories")
    assert answer.status_code == 404
    assert "under /rest/labs only" in answer.json()["meta"]["message"]
    assert (auth.calls, services.calls) == (0, [])


async def test_a_handlers_own_caller_and_version_are_the_routers_resolved_once() -> None:
    auth = CountingAuthenticator()
    app = FastAPI()
    errors.install(app)
    app.state.gateway = SimpleNamespace(auth=auth)
    router, bare = APIRouter(prefix="/rest/{version}"), APIRouter(prefix="/rest/{version}")

    @router.get("/whoami")
    async def whoami(version: Version, c: Caller) -> dict[str, Any]:
        current = principal_var.get()
        return {"version": version, "user": c.username, "current": current and current.username}

    @router.get("/current")
    async def current() -> dict[str, Any]:
        principal = principal_var.get()
        return {"current": principal and principal.username}

    @bare.get("/bare")
    async def no_caller() -> dict[str, Any]:
        principal = principal_var.get()
        return {"current": principal and principal.username}

    app.include_router(router, dependencies=AUTHENTICATED)
    app.include_router(bare)
    answer = await _request(app, "GET", "/rest/latest/whoami", BASIC)
    assert answer.json() == {"version": "latest", "user": "alice", "current": "alice"}
    assert auth.calls == 1  # the router's caller and the handler's: one authentication
    answer = await _request(app, "GET", "/rest/v1/current", BASIC)
    assert answer.json() == {"current": "alice"}
    assert auth.calls == 2
    # The control: a route without the dependency sees no caller.
    answer = await _request(app, "GET", "/rest/v1/bare", BASIC)
    assert answer.json() == {"current": None}
    assert auth.calls == 2
