"""``/abstractitems``: one search over every service that owns abstract items.

Each owner answers with its first ``startAt + maxResults`` matches in the requested
order; the gateway merges them and cuts the page. Today the items service is the only
owner; test records and attachments join when their services exist.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.common.dates import format_datetime
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.core.v1 import core_pb2
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.deps import Caller, Gw, Paging, View, dates_with_time, view_of
from plumbline.items.v1 import items_pb2

router = APIRouter(prefix="/rest/{version}", tags=["abstractitems"])

Record = TypeVar("Record", bound=Mapping[str, Any])

SORT_KEYS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "id": lambda r: r["id"],
    "documentKey": lambda r: r["documentKey"],
    "name": lambda r: r["fields"].get("name", ""),
    "createdDate": lambda r: r["createdDate"],
    "modifiedDate": lambda r: r["modifiedDate"],
    "lastActivityDate": lambda r: r["lastActivityDate"],
    "sequence": lambda r: (r["project"], r["location"]["globalSortOrder"]),
    "globalSortOrder": lambda r: (r["project"], r["location"]["globalSortOrder"]),
}


def _sort(values: Sequence[str]) -> tuple[str, bool]:
    value = values[-1] if values else "sequence.asc"
    field, _, direction = value.rpartition(".")
    if not field or direction not in ("asc", "desc") or field not in SORT_KEYS:
        raise InvalidArgument(
            f"sortBy must be <field>.asc or <field>.desc with a field of {', '.join(SORT_KEYS)}, "
            f"got {value!r}"
        )
    return field, direction == "desc"


def _range(
    dates: query.DateRange | None, message: items_pb2.SearchItemsRequest, prefix: str
) -> None:
    if dates is None:
        return
    start, end = dates
    setattr(message, f"{prefix}_from", format_datetime(start))
    if end is not None:
        setattr(message, f"{prefix}_to", format_datetime(end))


def _integers(name: str, description: str) -> Any:
    return Depends(query.integers(name, description=description))


def _dates(name: str, what: str) -> Any:
    return Depends(query.date_range(name, what))


Items = Annotated[View, Depends(view_of("items"))]
SortBy = Annotated[
    tuple[str, bool],
    Depends(
        query.parameter(
            "sortBy",
            {
                "type": "string",
                "enum": [f"{key}.{way}" for key in SORT_KEYS for way in ("asc", "desc")],
                "default": "sequence.asc",
            },
            _sort,
            description="The order: a field, then .asc or .desc.",
        )
    ),
]
Projects = Annotated[list[int], _integers("project", "Only items of these projects.")]
ItemTypes = Annotated[list[int], _integers("itemType", "Only items of these item types.")]
Releases = Annotated[list[int], _integers("release", "Only items of these releases.")]
DocumentKeys = Annotated[
    list[str],
    Depends(query.strings("documentKey", description="Only items with these document keys.")),
]
Contains = Annotated[
    list[str],
    Depends(
        query.strings(
            "contains",
            description="Only items with any of these texts in their text values (any case).",
            max_length=1000,
        )
    ),
]
Created = Annotated[query.DateRange | None, _dates("createdDate", "Items created")]
Modified = Annotated[query.DateRange | None, _dates("modifiedDate", "Items modified")]
LastActivity = Annotated[
    query.DateRange | None, _dates("lastActivityDate", "Items with their last activity")
]


@router.get(
    "/abstractitems",
    summary="Search items, test records and attachments",
    responses=schemas.page(records.Item),
)
async def search(
    request: Request,
    view: Items,
    gw: Gw,
    page: Paging,
    _c: Caller,
    sort: SortBy,
    projects: Projects,
    item_types: ItemTypes,
    document_keys: DocumentKeys,
    releases: Releases,
    contains: Contains,
    created: Created,
    modified: Modified,
    last_activity: LastActivity,
) -> Response:
    field, descending = sort
    message = items_pb2.SearchItemsRequest(
        projects=projects,
        item_types=item_types,
        document_keys=document_keys,
        releases=releases,
        contains=[c for c in contains if c],
        sort_field=field,
        sort_descending=descending,
        page=page.message(),
        dates_with_time=dates_with_time(request),
    )
    _range(created, message, "created")
    _range(modified, message, "modified")
    _range(last_activity, message, "last_activity")
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
    streams: list[list[Record]], field: str, descending: bool, start: int, size: int
) -> list[Record]:
    """One page out of several owners' sorted first ``start + size`` records."""
    merged = heapq.merge(*streams, key=SORT_KEYS[field], reverse=descending)
    return list(itertools.islice(merged, start, start + size))


@router.get(
    "/abstractitems/{id}",
    summary="Get any abstract item by id",
    responses=schemas.one(records.Item),
)
async def get_abstract_item(request: Request, id: int, view: Items, gw: Gw, _c: Caller) -> Response:
    owner = (await gw.upstreams.items.ids.GetIdOwner(core_pb2.Id(id=id))).owner
    if owner != "items":
        raise NotFound(f"No abstract item with id {id}.")
    reply = await gw.upstreams.items.items.GetItems(
        items_pb2.GetItemsRequest(ids=[id], dates_with_time=dates_with_time(request))
    )
    return await view.one(representations.item(reply.items[0]))
