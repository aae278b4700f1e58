"""``RouteIndex``: the gateway finds each request's route among its resource's routes, and
finds the same one Starlette's loop over every route finds."""

from __future__ import annotations

import re

import httpx
import pytest
from fastapi import FastAPI
from starlette.routing import BaseRoute, Match, Route

from plumbline.gateway.dispatch import RouteIndex, resource_of_path, resource_of_route
from plumbline.gateway.module import install_routes


def _app() -> FastAPI:
    app = FastAPI()
    install_routes(app)
    return app


def _starlette_match(routes: list[BaseRoute], path: str, method: str) -> BaseRoute | None:
    scope = {"type": "http", "path": path, "method": method, "root_path": "", "headers": []}
    for route in routes:
        if route.matches(scope)[0] is Match.FULL:
            return route
    return None


def _index_match(index: RouteIndex, path: str, method: str) -> BaseRoute | None:
    scope = {"type": "http", "path": path, "method": method, "root_path": "", "headers": []}
    for route in index.candidates(path):
        if route.matches(scope)[0] is Match.FULL:
            return route
    return None


def test_every_route_of_the_gateway_is_found_as_starlette_finds_it() -> None:
    """For a path made from each route (every parameter ``1``, the version ``v1``) and
    each of its methods, the index picks the route Starlette's loop picks, among fewer."""
    app = _app()
    index = RouteIndex(app.router)
    checked = 0
    for route in app.router.routes:
        if not isinstance(route, Route):
            continue
        path = re.sub(r"\{version\}", "v1", route.path)
        path = re.sub(r"\{[^}]+\}", "1", path)
        for method in sorted(route.methods or {"GET"}):
            expected = _starlette_match(app.router.routes, path, method)
            assert _index_match(index, path, method) is expected, (method, path)
            checked += 1
    assert checked > 250
    items = index.candidates("/rest/v1/items/5")
    assert len(items) < len(app.router.routes) / 4
    assert all(resource_of_route(r) in ("items", None) for r in items)


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        ("/rest/v1/items/5", "items"),
        ("/rest/v1/items", "items"),
        ("/rest/latest/testruns/3/steps", "testruns"),
        ("/rest/v1", None),
        ("/rest", None),
        ("/healthz", None),
        ("/other/v1/items", None),
    ],
)
def test_the_resource_of_a_path_is_its_third_segment_under_rest(
    path: str, resource: str | None
) -> None:
    assert resource_of_path(path) == resource


def test_routes_with_no_literal_resource_are_candidates_for_every_path() -> None:
    def endpoint() -> None: ...

    assert resource_of_route(Route("/rest/{version}/items/{id}", endpoint)) == "items"
    assert resource_of_route(Route("/rest/{version}/{anything}", endpoint)) is None
    assert resource_of_route(Route("/rest/{version:path}/items", endpoint)) is None
    assert resource_of_route(Route("/rest/oauth/token", endpoint)) is None
    assert resource_of_route(Route("/healthz", endpoint)) is None


async def test_answers_through_the_index_are_those_of_starlette() -> None:
    """Through a real app: a full match, a 405 for a known path with another method, a 404
    for an unknown resource, the trailing slash redirect, and a route added afterwards."""
    app = FastAPI()

    @app.get("/rest/{version}/items/{id}")
    async def item(version: str, id: int) -> dict[str, object]:
        return {"item": id, "version": version}

    @app.get("/rest/{version}/{kind}/count")
    async def count(version: str, kind: str) -> dict[str, object]:
        return {"kind": kind}

    index = RouteIndex.install(app.router)
    assert app.router.middleware_stack == index.app
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as client:
        assert (await client.get("/rest/v1/items/5")).json() == {"item": 5, "version": "v1"}
        assert (await client.delete("/rest/v1/items/5")).status_code == 405
        assert (await client.get("/rest/v1/nothing/5")).status_code == 404
        assert (await client.get("/rest/v1/items/count")).status_code == 422  # items/{id}
        assert (await client.get("/rest/v1/plans/count")).json() == {"kind": "plans"}
        moved = await client.get("/rest/v1/items/5/")
        assert (moved.status_code, moved.headers["location"]) == (
            307,
            "http://test/rest/v1/items/5",
        )

        @app.get("/rest/{version}/later")
        async def later(version: str) -> dict[str, object]:
            return {"later": True}

        assert (await client.get("/rest/v1/later")).json() == {"later": True}
        candidates = [getattr(r, "path", "") for r in index.candidates("/rest/v1/later")]
        assert [p for p in candidates if p.startswith("/rest")] == [
            "/rest/{version}/{kind}/count",
            "/rest/{version}/later",
        ]
