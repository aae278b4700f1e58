"""Finding a request's route by its resource instead of trying every route in turn.

Starlette matches a request against each route of the app in order until one matches:
with about 280 routes that was 70 regular expressions for ``GET /items/{id}`` (120 µs
of the gateway's CPU), 190 for ``PUT /testruns/{id}`` and 270 for a baseline (310 µs).
Nearly every route is ``/rest/{version}/<resource>...`` with a literal resource, and such
a route can only match a path whose third segment is that resource. ``RouteIndex`` keeps,
for each resource, the routes that could match it (those of the resource and those with
no literal resource, such as ``/healthz`` or a mount) in the app's order, and runs
Starlette's own loop over them: the first full match wins, else the first partial one
(405). What matches none of them goes to Starlette's whole loop, which answers 404 or
redirects a trailing slash exactly as before.
"""

from __future__ import annotations

import re

from starlette._utils import get_route_path  # what Router.app matches on: the same path
from starlette.routing import BaseRoute, Match, Route, Router
from starlette.types import Receive, Scope, Send

_LITERAL = re.compile(r"[A-Za-z0-9_.~-]+")
_PARAMETER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


def resource_of_route(route: BaseRoute) -> str | None:
    """The literal resource a route needs (``items`` for ``/rest/{version}/items/{id}``),
    or None when it could match a path with any (not ``/rest/{version}/<literal>...``)."""
    if not isinstance(route, Route):  # APIRoute included; mounts match under any path
        return None
    parts = route.path.split("/", 4)
    if len(parts) < 4 or parts[0] or parts[1] != "rest" or not _PARAMETER.fullmatch(parts[2]):
        return None
    return parts[3] if _LITERAL.fullmatch(parts[3]) else None


def resource_of_path(path: str) -> str | None:
    """The third segment of a ``/rest/...`` path (``items`` of ``/rest/v1/items/5``)."""
    parts = path.split("/", 4)
    if len(parts) < 4 or parts[1] != "rest":
        return None
    return parts[3]


class RouteIndex:
    """Dispatches a router's HTTP requests through the routes of their resource."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self._whole_loop = router.app
        self._built: tuple[int, int] | None = None
        self._by_resource: dict[str, list[BaseRoute]] = {}
        self._anywhere: list[BaseRoute] = []

    @classmethod
    def install(cls, router: Router) -> RouteIndex:
        """Puts the index in front of ``router``'s own loop (a router with middleware of
        its own keeps its stack: the index goes first only where the loop was)."""
        index = cls(router)
        if router.middleware_stack == router.app:
            router.middleware_stack = index.app
        return index

    def candidates(self, path: str) -> list[BaseRoute]:
        """The routes that could match ``path``, in the router's order."""
        routes = self.router.routes
        if self._built != (id(routes), len(routes)):  # routes added since: index again
            self._index(routes)
        resource = resource_of_path(path)
        if resource is None:
            return self._anywhere
        return self._by_resource.get(resource, self._anywhere)

    def _index(self, routes: list[BaseRoute]) -> None:
        keyed = [(route, resource_of_route(route)) for route in routes]
        resources = {key for _, key in keyed if key is not None}
        self._by_resource = {
            resource: [route for route, key in keyed if key in (resource, None)]
            for resource in resources
        }
        self._anywhere = [route for route, key in keyed if key is None]
        self._built = (id(routes), len(routes))

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Starlette's ``Router.app`` over the candidates; the whole loop for the rest."""
        if scope["type"] != "http":
            await self._whole_loop(scope, receive, send)
            return
        scope.setdefault("router", self.router)
        partial: tuple[BaseRoute, Scope] | None = None
        for route in self.candidates(get_route_path(scope)):
            match, child_scope = route.matches(scope)
            if match is Match.FULL:
                scope.update(child_scope)
                await route.handle(scope, receive, send)
                return
            if match is Match.PARTIAL and partial is None:
                partial = (route, child_scope)
        if partial is not None:  # the path is known, the method is not: 405
            route, child_scope = partial
            scope.update(child_scope)
            await route.handle(scope, receive, send)
            return
        await self._whole_loop(scope, receive, send)
