"""``/testruns``: finding test runs and recording their results, one by one or in bulk."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common import int64
from plumbline.common.errors import InvalidArgument
from plumbline.common.jsonvalues import free_json
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import PatchOperation, RunUpdate, TestRunBody
from plumbline.gateway.deps import (
    LABS_ONLY,
    Gw,
    Paging,
    Version,
    View,
    dates_with_time,
    view_of,
)
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.jsonbody import read_json
from plumbline.gateway.routes.testrecords import get_records

router = APIRouter(prefix="/rest/{version}", tags=["testruns"])

Runs = Annotated[View, Depends(view_of("testruns"))]

SORT_FIELDS = (
    "documentKey",
    "id",
    "name",
    "createdDate",
    "modifiedDate",
    "testRunStatus",
    "sortOrderFromTestGroup",
)
DEFAULT_SORT = "documentKey.asc"
#: At most this many test runs in one bulk update.
MAX_BULK = 1000


def _sort(values: Sequence[str]) -> tuple[str, bool]:
    value = values[-1] if values else DEFAULT_SORT
    field, _, direction = value.rpartition(".")
    if field not in SORT_FIELDS or direction not in ("asc", "desc"):
        raise InvalidArgument(
            f"sortBy must be <field>.asc or <field>.desc with a field of "
            f"{', '.join(SORT_FIELDS)}, got {value!r}"
        )
    return field, direction == "desc"


SortBy = Annotated[
    tuple[str, bool],
    Depends(
        query.parameter(
            "sortBy",
            {
                "type": "string",
                "enum": [f"{key}.{way}" for key in SORT_FIELDS for way in ("asc", "desc")],
                "default": DEFAULT_SORT,
            },
            _sort,
            description="The order: a field, then .asc or .desc.",
        )
    ),
]
TestCycles = Annotated[
    list[int], Depends(query.integers("testCycle", description="Runs of any of these cycles."))
]
TestPlans = Annotated[
    list[int], Depends(query.integers("testPlan", description="Runs of any of these plans."))
]
TestCases = Annotated[
    list[int], Depends(query.integers("testCase", description="Runs of any of these test cases."))
]


async def _page(
    request: Request, view: View, gw: Gw, message: testmgmt_pb2.ListRunsRequest
) -> Response:
    message.dates_with_time = dates_with_time(request)
    reply = await gw.upstreams.testmgmt.runs.ListRuns(message)
    return await view.many([representations.test_run(r) for r in reply.records], reply.page_info)


@router.get(
    "/testruns",
    summary="Find test runs by test cycle, test plan and test case",
    description="Ids of one parameter are ORed, different parameters ANDed; without any of "
    "the three the answer is empty.",
    responses=schemas.page(records.TestRun),
)
async def search_runs(
    request: Request,
    view: Runs,
    gw: Gw,
    page: Paging,
    test_cycles: TestCycles,
    test_plans: TestPlans,
    test_cases: TestCases,
    sort: SortBy,
) -> Response:
    field, descending = sort
    message = testmgmt_pb2.ListRunsRequest(
        test_cycles=test_cycles,
        test_plans=test_plans,
        test_cases=test_cases,
        sort_field=field,
        sort_descending=descending,
        page=page.message(),
    )
    return await _page(request, view, gw, message)


@router.get(
    "/testcycles/{testCycleId}/testruns",
    summary="List a test cycle's test runs",
    responses=schemas.page(records.TestRun),
)
async def cycle_runs(
    request: Request, testCycleId: int, view: Runs, gw: Gw, page: Paging
) -> Response:
    # A search leaves out what the caller may not read; the cycle's own list is refused
    # (or not found) like the cycle itself.
    await get_records(gw, request, [testCycleId], testmgmt_pb2.CYCLE)
    message = testmgmt_pb2.ListRunsRequest(test_cycles=[testCycleId], page=page.message())
    return await _page(request, view, gw, message)


@router.get("/testruns/{id}", summary="Get a test run", responses=schemas.one(records.TestRun))
async def get_run(request: Request, id: int, view: Runs, gw: Gw) -> Response:
    [run] = await get_records(gw, request, [id], testmgmt_pb2.RUN)
    return await view.one(representations.test_run(run))


@router.put(
    "/testruns/{id}",
    summary="Record a test run's results",
    description="Only the fields the execution changes are taken (testRunSteps with each "
    "step's status and result, testRunStatus for a run without steps, actualResults, "
    "assignedTo and custom fields); the others are ignored.",
    responses=schemas.updated(),
)
async def update_run(id: int, body: TestRunBody, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.runs.UpdateRun(
        testmgmt_pb2.UpdateRequest(id=id, fields_json=free_json(body.fields, "fields"))
    )
    return updated()


@router.patch(
    "/testruns/{id}",
    summary="Change a test run's results with RFC 6902 operations",
    responses=schemas.updated(),
    openapi_extra=schemas.array_body(PatchOperation),
)
async def patch_run(request: Request, id: int, gw: Gw) -> Response:
    operations = await request.body()
    await gw.upstreams.testmgmt.runs.PatchRun(
        testmgmt_pb2.PatchRequest(id=id, operations_json=operations)
    )
    return updated()


@router.delete(
    "/testruns/{id}", status_code=204, summary="Delete a test run", responses=schemas.deleted()
)
async def delete_run(id: int, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.runs.DeleteRun(core_pb2.Id(id=id))
    return deleted()


@router.post(
    "/testruns/{id}/updatedtestcase",
    status_code=201,
    summary="Replace a test run with one made from its test case's current version",
    responses=schemas.created(),
)
async def refresh_run(request: Request, id: int, version: Version, gw: Gw) -> Response:
    view = View(request, gw, version, "testruns")
    reply = await gw.upstreams.testmgmt.runs.RefreshRun(core_pb2.Id(id=id))
    return created(reply.id, view.location(f"testruns/{reply.id}"))


def _update(number: int, entry: Any) -> testmgmt_pb2.RunUpdate:
    """One element of a bulk update: ``{"id": <test run id>, "fields": {...}}`` (the id a
    number or a string of digits, as in every body)."""
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        entry = dict(entry, id=int64.spelled(entry["id"]))
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("id"), int)
        or isinstance(entry["id"], bool)
        or not int64.fits(entry["id"])
        or not isinstance(entry.get("fields"), dict)
        or set(entry) - {"id", "fields"}
    ):
        raise InvalidArgument(
            f'element {number} must be {{"id": <test run id>, "fields": {{...}}}}.'
        )
    return testmgmt_pb2.RunUpdate(
        id=entry["id"], fields_json=free_json(entry["fields"], f"element {number}.fields")
    )


@router.patch(
    "/testruns",
    summary="Record the results of many test runs",
    description=f"At most {MAX_BULK} runs; each succeeds or fails alone, and the answer "
    "holds a result per run in the order sent.",
    responses=schemas.updated(records.TestRunResult, many=True),
    openapi_extra=schemas.array_body(RunUpdate, max_items=MAX_BULK),
    dependencies=[LABS_ONLY],
)
async def update_runs(
    request: Request,
    gw: Gw,
) -> Response:
    entries = await read_json(request)
    if not isinstance(entries, list) or not entries:
        raise InvalidArgument(
            'The body must be a non-empty JSON array of {"id", "fields"} objects.'
        )
    if len(entries) > MAX_BULK:
        raise InvalidArgument(
            f"At most {MAX_BULK} test runs can be updated at once, got {len(entries)}."
        )
    updates = [_update(number, entry) for number, entry in enumerate(entries)]
    reply = await gw.upstreams.testmgmt.runs.UpdateRuns(
        testmgmt_pb2.UpdateRunsRequest(updates=updates)
    )
    results: list[records.TestRunResult] = [
        {
            "id": r.id,
            "status": r.status,
            "message": r.message,
            "testRunStatus": r.test_run_status,
        }
        for r in reply.results
    ]
    return updated(results)
