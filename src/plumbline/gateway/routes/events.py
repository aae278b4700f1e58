"""(labs) ``/events``: the change feed. Every change the caller may read, in the order
the feed recorded it, after a cursor; a client that keeps the last cursor it saw catches
up from it with nothing lost, and ``wait`` long-polls for the next change instead of
asking again and again (the hooks service, ``docs/contexts/hooks.md``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from plumbline.api.hooks.v1 import hooks_pb2
from plumbline.common.changes import EVENT_TYPES, OBJECT_TYPES
from plumbline.common.errors import InvalidArgument
from plumbline.gateway import params, query, records, schemas
from plumbline.gateway.deps import Gw
from plumbline.gateway.envelope import after_cursor
from plumbline.gateway.representations import change

router = APIRouter(prefix="/rest/{version}", tags=["events"])

#: Changes in one answer, by default and at most.
LIMIT = 100
MAX_LIMIT = 1_000
#: The longest a long poll waits, seconds.
MAX_WAIT = 30.0


def _seconds(values: Sequence[str]) -> float:
    """``wait``: seconds, 0 to ``MAX_WAIT``."""
    raw = params.single(values, "wait")
    if raw is None:
        return 0.0
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= MAX_WAIT:
        raise InvalidArgument(
            f"wait must be a number of seconds from 0 to {MAX_WAIT:.0f}, got {raw!r}"
        )
    return seconds


After = Annotated[
    int,
    Depends(
        query.paging(
            "after",
            description="The changes after this cursor (meta.next of the previous answer, "
            "or a change's cursor); 0, the default, reads from the oldest change the feed "
            "keeps (PLUMBLINE_EVENTS_RETENTION_DAYS, 30 by default). A cursor older than "
            "that is refused (400): the changes after it are gone.",
            minimum=0,
            maximum=2**63 - 1,
            default=0,
        )
    ),
]
Limit = Annotated[
    int,
    Depends(
        query.paging(
            "limit",
            description="The most changes in the answer.",
            minimum=1,
            maximum=MAX_LIMIT,
            default=LIMIT,
        )
    ),
]
Wait = Annotated[
    float,
    Depends(
        query.parameter(
            "wait",
            {"type": "number", "minimum": 0, "maximum": MAX_WAIT, "default": 0},
            _seconds,
            description="Long poll: when no change after the cursor is there yet, wait up "
            f"to this many seconds (at most {MAX_WAIT:.0f}) for the first and answer as "
            "soon as it comes; an empty answer after the wait keeps meta.next.",
        )
    ),
]
EventTypes = Annotated[list[str], query.choices("eventType", EVENT_TYPES, "Only these kinds.")]
ObjectTypes = Annotated[
    list[str], query.choices("objectType", OBJECT_TYPES, "Only changes of these records.")
]
Projects = Annotated[
    list[int], Depends(query.integers("project", description="Only these projects' changes."))
]
ItemTypes = Annotated[
    list[int], Depends(query.integers("itemType", description="Only these item types."))
]


@router.get(
    "/events",
    summary="Read the changes after a cursor, waiting for the next if asked (labs)",
    description="Every change of a record the caller may read (its project's, and the "
    "other project a relationship names; the organization's users, groups and settings "
    "to organization administrators), in the order the change feed recorded them: the "
    "order of each record's changes, and of each project's. Keep meta.next and pass it "
    "as after to read on: nothing is skipped or repeated. A change written just before "
    "the read is in it (read-your-writes, as for /activities).",
    responses={**schemas.after_cursor(records.Change, "The changes after the cursor.")},
)
async def list_events(
    gw: Gw,
    after: After,
    limit: Limit,
    wait: Wait,
    event_types: EventTypes,
    object_types: ObjectTypes,
    projects: Projects,
    item_types: ItemTypes,
) -> Response:
    message = hooks_pb2.ListChangesRequest(
        after=after,
        limit=limit,
        wait_seconds=wait,
        event_types=event_types,
        object_types=object_types,
        projects=projects,
        item_types=item_types,
    )
    message.wait_for.extend(await gw.upstreams.watermarks())
    # A long poll may take up to ``wait``: the call's deadline allows it.
    reply = await gw.upstreams.hooks.changes.ListChanges(message, timeout=wait + 30)
    return after_cursor([change(c) for c in reply.changes], reply.next)
