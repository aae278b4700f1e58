"""``/abstractitems``: one search over every service that owns abstract items.

Each owner answers with its first ``startAt + maxResults`` matches in the requested
order; the gateway merges them and cuts the page. Today the items service is the only
owner; test records and attachments join when their services exist.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plumbline.common.dates import format_datetime, parse_date_range
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.core.v1 import core_pb2
from plumbline.gateway import params, representations
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View
from plumbline.gateway.routes.items import dates_with_time
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["abstractitems"])

SORT_KEYS = {
    "id": lambda r: r["id"],
    "documentKey": lambda r: r["documentKey"],
    "name": lambda r: r["fields"].get("name", ""),
    "createdDate": lambda r: r["createdDate"],
    "modifiedDate": lambda r: r["modifiedDate"],
    "lastActivityDate": lambda r: r["lastActivityDate"],
    "sequence": lambda r: (r["project"], r["location"]["globalSortOrder"]),
    "globalSortOrder": lambda r: (r["project"], r["location"]["globalSortOrder"]),
}


def _sort(request: Request) -> tuple[str, bool]:
    value = request.query_params.get("sortBy", "sequence.asc")
    field, _, direction = value.rpartition(".")
    if not field or direction not in ("asc", "desc") or field not in SORT_KEYS:
        raise InvalidArgument(
            f"sortBy must be <field>.asc or <field>.desc with a field of {', '.join(SORT_KEYS)}, "
            f"got {value!r}"
        )
    return field, direction == "desc"


def _range(request: Request, name: str, message: items_pb2.SearchItemsRequest, prefix: str) -> None:
    values = request.query_params.getlist(name)
    if not values:
        return
    start, end = parse_date_range(values, name)
    setattr(message, f"{prefix}_from", format_datetime(start))
    if end is not None:
        setattr(message, f"{prefix}_to", format_datetime(end))


@router.get("/abstractitems", summary="Search items, test records and attachments")
async def search(request: Request, version: Version, gw: Gw, page: Paging, _c: Caller) -> Response:
    view = await View.of_items(request, gw, version)
    field, descending = _sort(request)
    message = items_pb2.SearchItemsRequest(
        projects=params.integers(request, "project"),
        item_types=params.integers(request, "itemType"),
        document_keys=params.strings(request, "documentKey"),
        releases=params.integers(request, "release"),
        contains=[c for c in params.strings(request, "contains", max_length=1000) if c],
        sort_field=field,
        sort_descending=descending,
        page=page.message(),
        dates_with_time=dates_with_time(request),
    )
    _range(request, "createdDate", message, "created")
    _range(request, "modifiedDate", message, "modified")
    _range(request, "lastActivityDate", message, "last_activity")
    owners = [gw.upstreams.items.items.SearchItems]
    if len(owners) == 1:
        # One owner pages by itself.
        reply = await owners[0](message)
        return await view.many([representations.item(i) for i in reply.items], reply.page_info)
    # Several owners: each returns its first startAt + maxResults; the merge picks the page.
    message.page.CopyFrom(core_pb2.Page(start_at=0, max_results=page.start_at + page.max_results))
    replies = [await search_owner(message) for search_owner in owners]
    streams = [[representations.item(i) for i in r.items] for r in replies]
    total = sum(r.page_info.total_results for r in replies)
    chunk = merge_pages(streams, field, descending, page.start_at, page.max_results)
    return await view.many(
        chunk,
        core_pb2.PageInfo(start_index=page.start_at, result_count=len(chunk), total_results=total),
    )


def merge_pages(
    streams: list[list[dict[str, Any]]], field: str, descending: bool, start: int, size: int
) -> list[dict[str, Any]]:
    """One page out of several owners' sorted first ``start + size`` records."""
    merged = heapq.merge(*streams, key=SORT_KEYS[field], reverse=descending)
    return list(itertools.islice(merged, start, start + size))


@router.get("/abstractitems/{id}", summary="Get any abstract item by id")
async def get_abstract_item(
    request: Request, id: int, version: Version, gw: Gw, _c: Caller
) -> Response:
    owner = (await gw.upstreams.items.ids.GetIdOwner(core_pb2.Id(id=id))).owner
    if owner != "items":
        raise NotFound(f"No abstract item with id {id}.")
    view = await View.of_items(request, gw, version)
    reply = await gw.upstreams.items.items.GetItems(
        items_pb2.GetItemsRequest(ids=[id], dates_with_time=dates_with_time(request))
    )
    return await view.one(representations.item(reply.items[0]))
