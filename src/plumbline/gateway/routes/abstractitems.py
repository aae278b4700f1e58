"""``/abstractitems``: one search over every service that owns abstract items.

Each owner answers with its first ``startAt + maxResults`` matches in the requested
order; the gateway merges them and cuts the page. The owners are the items service and
the test management service (test plans, cycles and runs) and the attachments service.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.dates import format_datetime
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.common.rpc import page_info
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.deps import Gw, Paging, View, dates_with_time, view_of
from plumbline.gateway.routes.attachments import get_attachments
from plumbline.gateway.routes.testrecords import get_records
from plumbline.gateway.routes.versions import AsOf, as_of_record

router = APIRouter(prefix="/rest/{version}", tags=["abstractitems"])

Record = TypeVar("Record", bound=Mapping[str, Any])

MAX_INT32 = 2**31 - 1


def _tree_order(record: Mapping[str, Any]) -> tuple[int, int, int | str, int]:
    """Items in their project's tree order; records outside the tree (test plans, cycles
    and runs) after the project's items, as created. The owners sort alike."""
    location = record.get("location")
    if location is not None:
        return (record["project"], 0, location["globalSortOrder"], record["id"])
    return (record["project"], 1, record["createdDate"], record["id"])


SORT_KEYS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "id": lambda r: r["id"],
    "documentKey": lambda r: r["documentKey"],
    "name": lambda r: str(r["fields"].get("name") or ""),
    "createdDate": lambda r: r["createdDate"],
    "modifiedDate": lambda r: r["modifiedDate"],
    "lastActivityDate": lambda r: r["lastActivityDate"],
    "sequence": _tree_order,
    "globalSortOrder": _tree_order,
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


def _range(dates: query.DateRange | None, message: core_pb2.RecordSearch, prefix: str) -> None:
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


AbstractItems = Annotated[View, Depends(view_of("abstractitems"))]
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
    responses=schemas.page(records.AbstractItem),
)
async def search(
    request: Request,
    view: AbstractItems,
    gw: Gw,
    page: Paging,
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
    texts = [c for c in contains if c]
    with_time = dates_with_time(request)
    # Each owner returns its first startAt + maxResults; the merge picks the page.
    first = core_pb2.Page(start_at=0, max_results=min(page.start_at + page.max_results, MAX_INT32))
    wanted = core_pb2.RecordSearch(
        projects=projects,
        item_types=item_types,
        document_keys=document_keys,
        releases=releases,
        contains=texts,
        sort_field=field,
        sort_descending=descending,
        page=first,
        dates_with_time=with_time,
    )
    _range(created, wanted, "created")
    _range(modified, wanted, "modified")
    _range(last_activity, wanted, "last_activity")
    if releases:
        # Test records belong to no release: items alone answers, and pages by itself.
        wanted.page.CopyFrom(page.message())
        reply = await gw.upstreams.items.items.SearchItems(wanted)
        return await view.many([representations.item(i) for i in reply.items], reply.page_info)
    found_items, found_tests, found_files = await asyncio.gather(
        gw.upstreams.items.items.SearchItems(wanted),
        gw.upstreams.testmgmt.records.SearchRecords(wanted),
        gw.upstreams.attachments.attachments.SearchAttachments(wanted),
    )
    streams: list[list[Mapping[str, Any]]] = [
        [representations.item(i) for i in found_items.items],
        [representations.test_record(r) for r in found_tests.records],
        [representations.attachment(a) for a in found_files.attachments],
    ]
    total = sum(found.page_info.total_results for found in (found_items, found_tests, found_files))
    chunk = merge_pages(streams, field, descending, page.start_at, page.max_results)
    return await view.many(
        chunk,
        page_info(page.start_at, len(chunk), total),
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
    responses=schemas.one(records.AbstractItem),
)
async def get_abstract_item(
    request: Request, id: int, view: AbstractItems, gw: Gw, as_of: AsOf
) -> Response:
    if as_of is not None:
        return await view.one(await as_of_record(gw, request, "abstractitems", id, as_of))
    owner = (await gw.upstreams.items.ids.GetIdOwner(core_pb2.Id(id=id))).owner
    if owner == "items":
        reply = await gw.upstreams.items.items.GetItems(
            items_pb2.GetItemsRequest(ids=[id], dates_with_time=dates_with_time(request))
        )
        return await view.one(representations.item(reply.items[0]))
    if owner == "testmgmt":
        [record] = await get_records(gw, request, [id], testmgmt_pb2.KIND_UNSPECIFIED)
        return await view.one(representations.test_record(record))
    if owner == "attachments":
        [attachment] = await get_attachments(gw, request, [id])
        return await view.one(representations.attachment(attachment))
    raise NotFound(f"No abstract item with id {id}.")
