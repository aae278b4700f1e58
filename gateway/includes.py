"""``links`` and ``include``: every reference field, resolved with one batch call per type."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from starlette.requests import Request

from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.core.v1 import core_pb2
from plumbline.gateway import representations
from plumbline.gateway.envelope import LinkTemplate
from plumbline.gateway.upstreams import Upstreams
from plumbline.items.v1 import items_pb2

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
    "itemtypes": {"data.fields.pickList": "picklists", "data.fields.itemType": "itemtypes"},
    "picklists": {},
    "picklistoptions": {"data.pickList": "picklists"},
    "relationshiptypes": {},
    "relationships": {
        "data.fromItem": "items",
        "data.toItem": "items",
        "data.relationshipType": "relationshiptypes",
    },
    "tags": {"data.project": "projects"},
    "releases": {"data.project": "projects"},
    "comments": {
        "data.createdBy": "users",
        "data.modifiedBy": "users",
        "data.inReplyTo": "comments",
        "data.location.item": "items",
        "data.location.project": "projects",
    },
    "locks": {"data.lockedBy": "users"},
    "syncstatus": {},
    "links": {},
    "filters": {"data.author": "users", "data.specifiedProject": "projects"},
    "filtercounts": {},
    "categories": {},
    "relationshiprulesets": {"data.rules.relationshipType": "relationshiptypes"},
    "workflowtransitions": {"data.newStatus": "picklistoptions"},
    "locations": {"data.parent.item": "items", "data.parent.project": "projects"},
    "items": {
        "data.project": "projects",
        "data.createdBy": "users",
        "data.modifiedBy": "users",
        "data.itemType": "itemtypes",
        "data.childItemType": "itemtypes",
        "data.location.parent.item": "items",
        "data.lock.lockedBy": "users",
    },
}

#: Field types whose values refer to records, and the type they refer to.
FIELD_LINKS = {
    "LOOKUP": "picklistoptions",
    "MULTI_LOOKUP": "picklistoptions",
    "USER": "users",
    "RELEASE": "releases",
    "DOCUMENT_TYPE_ITEM_LOOKUP": "items",
}

Resolver = Callable[[Upstreams, list[int]], Awaitable[dict[str, Any]]]


def _batch(
    service: str, method: str, field: str, render: Callable[[Any], Mapping[str, Any]]
) -> Resolver:
    """A resolver: one batch call ``service.method(ids)``, records from ``reply.field``."""

    async def resolve(upstreams: Upstreams, ids: list[int]) -> dict[str, Any]:
        request = (
            items_pb2.GetItemsRequest(ids=ids) if method == "GetItems" else core_pb2.IdList(ids=ids)
        )
        reply = await getattr(getattr(upstreams, service), method)(request)
        return {str(record.id): render(record) for record in getattr(reply, field)}

    return resolve


RESOLVERS: dict[str, Resolver] = {
    "users": _batch("identity", "GetUsers", "users", representations.user),
    "projects": _batch("items", "GetProjects", "projects", representations.project),
    "itemtypes": _batch("items", "GetItemTypes", "item_types", representations.item_type),
    "picklists": _batch("items", "GetPickLists", "pick_lists", representations.pick_list),
    "picklistoptions": _batch(
        "items", "GetPickListOptions", "options", representations.pick_list_option
    ),
    "relationshiptypes": _batch(
        "items", "GetRelationshipTypes", "relationship_types", representations.relationship_type
    ),
    "items": _batch("items", "GetItems", "items", representations.item),
    "tags": _batch("items", "GetTags", "tags", representations.tag),
    "releases": _batch("items", "GetReleases", "releases", representations.release),
    "comments": _batch("items", "GetComments", "comments", representations.comment),
}


def base_url(request: Request, public_url: str | None) -> str:
    """Scheme, host and context path the client used (or the configured public URL)."""
    if public_url:
        return public_url.rstrip("/")
    return f"{request.url.scheme}://{request.url.netloc}"


def links_for(
    resource: str,
    request: Request,
    version: str,
    public_url: str | None,
    extra: dict[str, str] | None = None,
) -> dict[str, LinkTemplate]:
    """The ``links`` map of a resource type (plus links of configured fields)."""
    base = base_url(request, public_url)
    return {
        path: {"type": target, "href": f"{base}/rest/{version}/{target}/{{{path}}}"}
        for path, target in {**LINKS[resource], **(extra or {})}.items()
    }


def requested(
    include: Sequence[str], resource: str, extra: dict[str, str] | None = None
) -> list[str]:
    """The ``include`` values, checked against the resource's links."""
    values = [v.strip() for v in include if v.strip()]
    allowed = {**LINKS[resource], **(extra or {})}
    for value in values:
        if value not in allowed:
            names = ", ".join(allowed) or "none"
            raise InvalidArgument(
                f"include: {value!r} is not a link of {resource}; allowed: {names}"
            )
    return values


def _values(record: Mapping[str, Any], path: str) -> list[Any]:
    """Every value at a dotted path; lists along the way are walked element by element."""
    current: list[Any] = [record]
    for part in path.split(".")[1:]:
        step: list[Any] = []
        for value in current:
            for element in value if isinstance(value, list) else [value]:
                if isinstance(element, dict) and part in element:
                    step.append(element[part])
        current = step
    flat: list[Any] = []
    for value in current:
        flat.extend(value if isinstance(value, list) else [value])
    return flat


async def resolve(
    upstreams: Upstreams,
    resource: str,
    includes: list[str],
    records: Iterable[Mapping[str, Any]],
    extra: dict[str, str] | None = None,
    known: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> dict[str, Any] | None:
    """The ``linked`` map: referenced records by type and id.

    ``known`` holds records the caller keeps anyway (the item types), by type and id;
    only ids it lacks are fetched.
    """
    if not includes:
        return None
    wanted: dict[str, set[int]] = {}
    records = list(records)
    links = {**LINKS[resource], **(extra or {})}
    for path in includes:
        target = links[path]
        for record in records:
            for v in _values(record, path):
                if isinstance(v, int) and not isinstance(v, bool):
                    wanted.setdefault(target, set()).add(v)
    linked: dict[str, Any] = {}
    for target, ids in wanted.items():
        cached = (known or {}).get(target, {})
        linked[target] = {str(i): cached[str(i)] for i in ids if str(i) in cached}
        wanted[target] = {i for i in ids if str(i) not in cached}
    targets = [t for t, ids in wanted.items() if ids]
    found = await asyncio.gather(*(_resolve_one(upstreams, t, sorted(wanted[t])) for t in targets))
    for target, fetched in zip(targets, found, strict=True):
        linked[target].update(fetched)
    return linked


async def _resolve_one(upstreams: Upstreams, target: str, ids: list[int]) -> dict[str, Any]:
    # A reference to a record that is gone is left out of linked, not an error.
    try:
        return await RESOLVERS[target](upstreams, ids)
    except NotFound:
        return {}
