"""``/activities``, and those of an item, a test plan or a test run; an activity's
affected items, and the restore of an item deletion."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.activity.v1 import activity_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.common.changes import EVENT_TYPES, OBJECT_TYPES
from plumbline.common.dates import format_datetime
from plumbline.common.rpc import page_info
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import RecordId
from plumbline.gateway.deps import (
    LABS_ONLY,
    Gw,
    Paging,
    View,
    dates_with_time,
    view_of,
)
from plumbline.gateway.envelope import created
from plumbline.gateway.routes.testrecords import FAMILY_BASES, NOUNS, Kind, foreign_item

router = APIRouter(prefix="/rest/{version}", tags=["activities"])


Activities = Annotated[View, Depends(view_of("activities"))]
Items = Annotated[View, Depends(view_of("items"))]
EventTypes = Annotated[
    list[str], query.choices("eventType", EVENT_TYPES, "Only these kinds of change.")
]
ObjectTypes = Annotated[
    list[str], query.choices("objectType", OBJECT_TYPES, "Only changes of these kinds of record.")
]
ItemTypes = Annotated[
    list[int], Depends(query.integers("itemType", description="Only changes of these item types."))
]
DeleteEvents = Annotated[
    bool, Depends(query.boolean("deleteEvents", description="Only deletions."))
]
Dates = Annotated[query.DateRange | None, Depends(query.date_range("date", "Changes made"))]


def _request(
    page: Paging,
    event_types: list[str],
    object_types: list[str],
    item_types: list[int],
    delete_events: bool,
    dates: query.DateRange | None,
) -> activity_pb2.ListActivitiesRequest:
    message = activity_pb2.ListActivitiesRequest(
        event_types=event_types,
        object_types=object_types,
        item_types=item_types,
        delete_events_only=delete_events,
        page=page.message(),
    )
    if dates:
        start, end = dates
        message.date_from = format_datetime(start)
        if end is not None:
            message.date_to = format_datetime(end)
    return message


async def _page(view: View, gw: Gw, message: activity_pb2.ListActivitiesRequest) -> Response:
    message.wait_for.extend(await gw.upstreams.watermarks())
    reply = await gw.upstreams.activity.activities.ListActivities(message)
    data = [representations.activity(a) for a in reply.activities]
    return await view.many(data, reply.page_info)


@router.get(
    "/activities",
    summary="List a project's activities (changes of users, groups, permissions and "
    "credentials are in the organization feed)",
    responses=schemas.page(records.Activity),
)
async def list_activities(
    view: Activities,
    gw: Gw,
    page: Paging,
    project: query.RequiredProject,
    event_types: EventTypes,
    object_types: ObjectTypes,
    item_types: ItemTypes,
    delete_events: DeleteEvents,
    dates: Dates,
) -> Response:
    message = _request(page, event_types, object_types, item_types, delete_events, dates)
    message.project = project
    return await _page(view, gw, message)


@router.get(
    "/activities/organization",
    summary="List the organization's activities: users, groups, permissions, credentials "
    "and settings (organization administrators, labs)",
    responses=schemas.page(records.Activity),
    dependencies=[LABS_ONLY],
)
async def list_organization_activities(
    view: Activities,
    gw: Gw,
    page: Paging,
    event_types: EventTypes,
    object_types: ObjectTypes,
    delete_events: DeleteEvents,
    dates: Dates,
) -> Response:
    message = _request(page, event_types, object_types, [], delete_events, dates)
    message.organization = True
    return await _page(view, gw, message)


@router.get(
    "/activities/{activityId}", summary="Get an activity", responses=schemas.one(records.Activity)
)
async def get_activity(activityId: RecordId, view: Activities, gw: Gw) -> Response:
    message = activity_pb2.GetActivityRequest(id=activityId)
    message.wait_for.extend(await gw.upstreams.watermarks())
    data = representations.activity(await gw.upstreams.activity.activities.GetActivity(message))
    return await view.one(data)


@router.get(
    "/activities/{activityId}/affecteditems",
    summary="The items an activity affected",
    description="An item's activity affected the item, and a deletion also the items "
    "deleted with it (deleted items are answered as they were deleted); a comment's, "
    "tag's or link's activity affected the item it belongs to; other activities none.",
    responses=schemas.page(records.Item),
)
async def affected_items(
    request: Request, activityId: RecordId, view: Items, gw: Gw, page: Paging
) -> Response:
    message = activity_pb2.ListAffectedItemsRequest(id=activityId, page=page.message())
    message.wait_for.extend(await gw.upstreams.watermarks())
    reply = await gw.upstreams.activity.activities.ListAffectedItems(message)
    found: list[items_pb2.Item] = []
    if reply.items:
        read = await gw.upstreams.items.items.GetItemsIncludingDeleted(
            items_pb2.GetItemsRequest(ids=reply.items, dates_with_time=dates_with_time(request))
        )
        found = list(read.items)
    # A comment, tag or link of a test record names no item: the one id is left out.
    total = reply.page_info.total_results - (len(reply.items) - len(found))
    info = page_info(reply.page_info.start_index, len(found), total)
    return await view.many([representations.item(i) for i in found], info)


@router.post(
    "/activities/{activityId}/restore",
    summary="Restore what a delete activity of an item deleted",
    description="The item comes back with the items deleted with it and their "
    "relationships, each item with a new version: under its old parent at its old "
    "position, or at the root of its project when that parent is deleted. A deletion can "
    "be restored once; other activities cannot be restored. Answers 201, as every POST of "
    "the contract does: meta.id is the activity's id and meta.location its affected items "
    "(what came back).",
    status_code=201,
    responses=schemas.created(),
)
async def restore_activity(activityId: RecordId, view: Activities, gw: Gw) -> Response:
    message = activity_pb2.RestoreActivityRequest(id=activityId)
    message.wait_for.extend(await gw.upstreams.watermarks())
    await gw.upstreams.activity.activities.RestoreActivity(message)
    return created(activityId, view.location(f"activities/{activityId}/affecteditems"))


@router.get(
    "/items/{id}/activities",
    summary="An item's activities",
    responses=schemas.page(records.Activity),
)
async def item_activities(id: int, view: Activities, gw: Gw, page: Paging) -> Response:
    # Read first: 404 for no such item, 401 without access to it.
    reply = await gw.upstreams.items.items.GetItems(items_pb2.GetItemsRequest(ids=[id]))
    message = activity_pb2.ListActivitiesRequest(
        project=reply.items[0].project, item=id, page=page.message()
    )
    return await _page(view, gw, message)


def _record_routes(base: str, kind: Kind) -> None:
    """A test plan's or run's activities: the project feed's records about it."""

    @router.get(
        f"/{base}/{{id}}/activities",
        summary=f"A {NOUNS[kind]}'s activities",
        responses=schemas.page(records.Activity),
    )
    async def record_activities(id: int, view: Activities, gw: Gw, page: Paging) -> Response:
        record = await foreign_item(gw, id, kind)
        message = activity_pb2.ListActivitiesRequest(
            project=record.project, item=id, page=page.message()
        )
        return await _page(view, gw, message)


for _base, _kind in FAMILY_BASES:
    _record_routes(_base, _kind)
