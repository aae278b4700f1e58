"""``links`` and ``include``: every reference field, resolved with one batch call per type."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from starlette.requests import Request

from plumbline.common.errors import InvalidArgument
from plumbline.core.v1 import core_pb2
from plumbline.gateway import representations
from plumbline.gateway.upstreams import Upstreams

#: resource type -> {dotted link path -> referenced resource type}
LINKS: dict[str, dict[str, str]] = {
    "users": {},
    "usergroups": {"data.project": "projects"},
    "projects": {
        "data.parent": "projects",
        "data.createdBy": "users",
        "data.modifiedBy": "users",
        "data.fields.projectManager": "users",
    },
    "activities": {"data.user": "users"},
}

Resolver = Callable[[Upstreams, list[int]], Awaitable[dict[str, Any]]]


async def _users(upstreams: Upstreams, ids: list[int]) -> dict[str, Any]:
    reply = await upstreams.identity.GetUsers(core_pb2.IdList(ids=ids))
    return {str(u.id): representations.user(u) for u in reply.users}


async def _projects(upstreams: Upstreams, ids: list[int]) -> dict[str, Any]:
    reply = await upstreams.items.GetProjects(core_pb2.IdList(ids=ids))
    return {str(p.id): representations.project(p) for p in reply.projects}


RESOLVERS: dict[str, Resolver] = {"users": _users, "projects": _projects}


def base_url(request: Request, public_url: str | None) -> str:
    """Scheme, host and context path the client used (or the configured public URL)."""
    if public_url:
        return public_url.rstrip("/")
    return f"{request.url.scheme}://{request.url.netloc}"


def links_for(
    resource: str, request: Request, version: str, public_url: str | None
) -> dict[str, Any]:
    """The ``links`` map of a resource type."""
    base = base_url(request, public_url)
    return {
        path: {"type": target, "href": f"{base}/rest/{version}/{target}/{{{path}}}"}
        for path, target in LINKS[resource].items()
    }


def requested(request: Request, resource: str) -> list[str]:
    """The ``include`` values, checked against the resource's links."""
    values = [v.strip() for v in request.query_params.getlist("include") if v.strip()]
    allowed = LINKS[resource]
    for value in values:
        if value not in allowed:
            names = ", ".join(allowed) or "none"
            raise InvalidArgument(
                f"include: {value!r} is not a link of {resource}; allowed: {names}"
            )
    return values


def _value(record: dict[str, Any], path: str) -> Any:
    current: Any = record
    for part in path.split(".")[1:]:
        if not isinstance(current, dict):
            return None
        current = current.get(part)
    return current


async def resolve(
    upstreams: Upstreams, resource: str, includes: list[str], records: Iterable[dict[str, Any]]
) -> dict[str, Any] | None:
    """The ``linked`` map: referenced records by type and id."""
    if not includes:
        return None
    wanted: dict[str, set[int]] = {}
    records = list(records)
    for path in includes:
        target = LINKS[resource][path]
        for record in records:
            value = _value(record, path)
            values = value if isinstance(value, list) else [value]
            for v in values:
                if isinstance(v, int) and not isinstance(v, bool):
                    wanted.setdefault(target, set()).add(v)
    linked: dict[str, Any] = {}
    for target, ids in wanted.items():
        linked[target] = await RESOLVERS[target](upstreams, sorted(ids))
    return linked
