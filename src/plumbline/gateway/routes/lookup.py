"""(labs) ``GET /records``: many records of several types by id in one call, each as its
own ``GET`` answers it to the caller.

The webhooks' deliveries read the changed records so, a batch of changes at a time (one
request instead of one per change: ``services/hooks/objects.py``), and any client that
holds ids from the change feed may. One batch call per type to its service
(``includes.read_records``, which ``include`` uses too); what the caller may not read,
or what is gone, is left out.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, NotRequired

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response
from typing_extensions import TypedDict

from plumbline.common.errors import InvalidArgument
from plumbline.gateway import query, records, schemas
from plumbline.gateway.deps import Gw, dates_with_time
from plumbline.gateway.envelope import ok
from plumbline.gateway.includes import read_records

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


#: The types ``GET /records`` reads, each a query parameter (``includes.RESOLVERS``).
TYPES = tuple(RecordsByType.__annotations__)


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
    f"At least one and at most {MAX_IDS} ids in all; the types are " + ", ".join(TYPES) + ".",
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
            "parameters named after their type: " + ", ".join(TYPES) + "."
        )
    kinds = list(wanted)
    found = await asyncio.gather(*(read_records(gw.upstreams, k, wanted[k], dated) for k in kinds))
    data: RecordsByType = dict(zip(kinds, found, strict=True))  # type: ignore[assignment]
    return ok(data)
