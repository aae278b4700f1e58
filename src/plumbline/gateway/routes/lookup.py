"""(labs) ``GET /records``: many records of several types by id in one call, each as its
own ``GET`` answers it to the caller.

The webhooks' deliveries read the changed records so, a batch of changes at a time (one
request instead of one per change: ``services/hooks/objects.py``), and any client that
holds ids from the change feed may. One batch call per type to its service (the same
calls ``include`` makes); what the caller may not read, or what is gone, is left out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, NotRequired

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response
from typing_extensions import TypedDict

from plumbline.api.attachments.v1 import attachments_pb2
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.errors import InvalidArgument, NotFound, PermissionDenied
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.deps import Gateway, Gw, dates_with_time
from plumbline.gateway.envelope import ok

router = APIRouter(prefix="/rest/{version}", tags=["records"])

#: The most ids one call may name, over every type.
MAX_IDS = 200


class RecordsByType(TypedDict):
    """The records asked for that the caller may read, by type, then by id (as a string,
    as in ``linked``). A type is present when it was asked for, even if none was found."""

    items: NotRequired[dict[str, records.Item]]
    relationships: NotRequired[dict[str, records.Relationship]]
    comments: NotRequired[dict[str, records.Comment]]
    projects: NotRequired[dict[str, records.Project]]
    tags: NotRequired[dict[str, records.Tag]]
    testplans: NotRequired[dict[str, records.TestPlan]]
    testcycles: NotRequired[dict[str, records.TestCycle]]
    testruns: NotRequired[dict[str, records.TestRun]]
    attachments: NotRequired[dict[str, records.Attachment]]
    baselines: NotRequired[dict[str, records.Baseline]]


#: Reads records of one type by id, dates with a time part or not: those found that the
#: caller may read, rendered as ``GET`` renders them.
Reader = Callable[[Gateway, list[int], bool], Awaitable[list[Mapping[str, Any]]]]


async def _items(gw: Gateway, ids: list[int], dated: bool) -> list[Mapping[str, Any]]:
    reply = await gw.upstreams.items.items.GetItems(
        items_pb2.GetItemsRequest(ids=ids, dates_with_time=dated)
    )
    return [representations.item(m) for m in reply.items]


async def _relationships(gw: Gateway, ids: list[int], dated: bool) -> list[Mapping[str, Any]]:
    reply = await gw.upstreams.items.relationships.GetRelationships(core_pb2.IdList(ids=ids))
    return [representations.relationship(m) for m in reply.relationships]


async def _comments(gw: Gateway, ids: list[int], dated: bool) -> list[Mapping[str, Any]]:
    reply = await gw.upstreams.items.comments.GetComments(core_pb2.IdList(ids=ids))
    return [representations.comment(m) for m in reply.comments]


async def _projects(gw: Gateway, ids: list[int], dated: bool) -> list[Mapping[str, Any]]:
    reply = await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=ids))
    return [representations.project(m) for m in reply.projects]


async def _tags(gw: Gateway, ids: list[int], dated: bool) -> list[Mapping[str, Any]]:
    reply = await gw.upstreams.items.tags.GetTags(core_pb2.IdList(ids=ids))
    return [representations.tag(m) for m in reply.tags]


def _test_records(
    kind: testmgmt_pb2.Kind.ValueType,
    render: Callable[[testmgmt_pb2.TestRecord], Mapping[str, Any]],
) -> Reader:
    async def read(gw: Gateway, ids: list[int], dated: bool) -> list[Mapping[str, Any]]:
        reply = await gw.upstreams.testmgmt.records.GetRecords(
            testmgmt_pb2.GetRecordsRequest(
                ids=ids, kind=kind, dates_with_time=dated, skip_missing=True
            )
        )
        return [render(m) for m in reply.records]

    return read


async def _attachments(gw: Gateway, ids: list[int], dated: bool) -> list[Mapping[str, Any]]:
    reply = await gw.upstreams.attachments.attachments.GetAttachments(
        attachments_pb2.GetAttachmentsRequest(ids=ids, dates_with_time=dated, skip_missing=True)
    )
    return [representations.attachment(m) for m in reply.attachments]


async def _baselines(gw: Gateway, ids: list[int], dated: bool) -> list[Mapping[str, Any]]:
    # Baselines are read one by one (there are few, and no batch call reads them).
    found = await asyncio.gather(*(_baseline(gw, i) for i in ids))
    return [b for b in found if b is not None]


async def _baseline(gw: Gateway, id: int) -> Mapping[str, Any] | None:
    try:
        reply = await gw.upstreams.baselines.baselines.GetBaseline(core_pb2.Id(id=id))
    except (NotFound, PermissionDenied):
        return None
    return representations.baseline(reply)


#: Each type ``GET /records`` reads, with its reader (the query parameter is the type).
READERS: dict[str, Reader] = {
    "items": _items,
    "relationships": _relationships,
    "comments": _comments,
    "projects": _projects,
    "tags": _tags,
    "testplans": _test_records(testmgmt_pb2.PLAN, representations.test_plan),
    "testcycles": _test_records(testmgmt_pb2.CYCLE, representations.test_cycle),
    "testruns": _test_records(testmgmt_pb2.RUN, representations.test_run),
    "attachments": _attachments,
    "baselines": _baselines,
}


async def _read(gw: Gateway, kind: str, ids: list[int], dated: bool) -> dict[str, Any]:
    try:
        found = await READERS[kind](gw, ids, dated)
    except (NotFound, PermissionDenied):
        # A read of one id refuses where a larger one leaves it out: here it is left out.
        return {}
    return {str(record["id"]): record for record in found}


async def _dated(request: Request) -> bool:
    return dates_with_time(request)


# The OpenAPI document declares the date header where a dependency is so marked.
_dated.date_header = True  # type: ignore[attr-defined]


def _ids(kind: str) -> Any:
    return Depends(
        query.integers(kind, description=f"Ids of {kind} to read (repeat the parameter).")
    )


@router.get(
    "/records",
    summary="Many records of several types by id, in one call (labs)",
    description="Each record as its own GET answers it to the caller (the date header "
    "included), by type and then by id: `?items=12&items=13&testruns=40`. Records the "
    "caller may not read, and ids that name nothing, are left out, never refused. "
    f"At least one and at most {MAX_IDS} ids in all; the types are " + ", ".join(READERS) + ".",
    responses={**schemas.one(RecordsByType), **schemas.errors(400)},
)
async def get_records(
    gw: Gw,
    dated: Annotated[bool, Depends(_dated)],
    items: Annotated[list[int], _ids("items")],
    relationships: Annotated[list[int], _ids("relationships")],
    comments: Annotated[list[int], _ids("comments")],
    projects: Annotated[list[int], _ids("projects")],
    tags: Annotated[list[int], _ids("tags")],
    testplans: Annotated[list[int], _ids("testplans")],
    testcycles: Annotated[list[int], _ids("testcycles")],
    testruns: Annotated[list[int], _ids("testruns")],
    attachments: Annotated[list[int], _ids("attachments")],
    baselines: Annotated[list[int], _ids("baselines")],
) -> Response:
    asked = {
        "items": items,
        "relationships": relationships,
        "comments": comments,
        "projects": projects,
        "tags": tags,
        "testplans": testplans,
        "testcycles": testcycles,
        "testruns": testruns,
        "attachments": attachments,
        "baselines": baselines,
    }
    wanted = {kind: sorted(set(ids)) for kind, ids in asked.items() if ids}
    total = sum(len(ids) for ids in wanted.values())
    if not 1 <= total <= MAX_IDS:
        raise InvalidArgument(
            f"Between 1 and {MAX_IDS} ids may be asked for in all, got {total}; ask with "
            "parameters named after their type: " + ", ".join(READERS) + "."
        )
    kinds = list(wanted)
    found = await asyncio.gather(*(_read(gw, k, wanted[k], dated) for k in kinds))
    data: RecordsByType = dict(zip(kinds, found, strict=True))  # type: ignore[assignment]
    return ok(data)
