"""``/activities``."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plumbline.activity.v1 import activity_pb2
from plumbline.common.dates import format_datetime, parse_date_range
from plumbline.common.errors import InvalidArgument
from plumbline.core.v1 import core_pb2
from plumbline.gateway import params, representations
from plumbline.gateway.bodies import RecordId
from plumbline.gateway.deps import Caller, Gw, Paging, Version, View
from plumbline.gateway.upstreams import Upstreams

router = APIRouter(prefix="/rest/{version}", tags=["activities"])

# The contract's values (its reconstructed OpenAPI enumerations).
EVENT_TYPES = ("CREATE", "UPDATE", "DELETE", "PUBLIC", "BATCH_SUMMARY")
OBJECT_TYPES = (
    "PROJECT",
    "ITEM",
    "USER",
    "RELATIONSHIP",
    "COMMENT",
    "ITEM_TAG",
    "TAG",
    "ITEM_ATTACHMENT",
    "URL",
    "TEST_RESULT",
    "BASELINE",
    "CHANGE_REQUEST",
    "REVIEW",
    "REVISION",
    "REVISION_ITEM",
    "TEST_PLAN",
    "TEST_CYCLE",
    "TEST_RUN",
    "INTEGRATION",
    "MISCELLANEOUS",
)


async def _positions(upstreams: Upstreams) -> list[core_pb2.Watermark]:
    """Where each event source is now: the feed must have caught up with it."""
    replies = await asyncio.gather(
        upstreams.identity.watermarks.GetWatermark(core_pb2.Empty()),
        upstreams.items.watermarks.GetWatermark(core_pb2.Empty()),
    )
    return list(replies)


def _choices(request: Request, name: str, allowed: tuple[str, ...]) -> list[str]:
    values = [v.strip().upper() for v in params.strings(request, name)]
    for value in values:
        if value not in allowed:
            raise InvalidArgument(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return values


@router.get("/activities", summary="List a project's activities")
async def list_activities(
    request: Request, version: Version, gw: Gw, page: Paging, _c: Caller
) -> Response:
    view = View(request, gw, version, "activities")
    project = params.integer(request, "project", required=True)
    assert project is not None
    message = activity_pb2.ListActivitiesRequest(
        project=project,
        event_types=_choices(request, "eventType", EVENT_TYPES),
        object_types=_choices(request, "objectType", OBJECT_TYPES),
        item_types=params.integers(request, "itemType"),
        delete_events_only=params.boolean(request, "deleteEvents"),
        page=page.message(),
    )
    dates = request.query_params.getlist("date")
    if dates:
        start, end = parse_date_range(dates, "date")
        message.date_from = format_datetime(start)
        if end is not None:
            message.date_to = format_datetime(end)
    message.wait_for.extend(await _positions(gw.upstreams))
    reply = await gw.upstreams.activity.activities.ListActivities(message)
    data = [representations.activity(a) for a in reply.activities]
    return await view.many(data, reply.page_info)


@router.get("/activities/{activityId}", summary="Get an activity")
async def get_activity(
    request: Request, activityId: RecordId, version: Version, gw: Gw, _c: Caller
) -> Response:
    view = View(request, gw, version, "activities")
    message = activity_pb2.GetActivityRequest(id=activityId)
    message.wait_for.extend(await _positions(gw.upstreams))
    data = representations.activity(await gw.upstreams.activity.activities.GetActivity(message))
    return await view.one(data)
