"""``/testcycles``: the test cycles of a test plan; writing one (re)generates its runs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.jsonvalues import free_json
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import GenerationConfig, PatchOperation, TestCycleBody
from plumbline.gateway.deps import Gw, Paging, Version, View, dates_with_time, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.routes.testrecords import get_records

router = APIRouter(prefix="/rest/{version}", tags=["testcycles"])

Cycles = Annotated[View, Depends(view_of("testcycles"))]
CycleGroups = Annotated[View, Depends(view_of("testcycletestgroups"))]


def generation_json(config: GenerationConfig | None) -> bytes:
    """``testRunGenerationConfig`` for the service; empty when the body has none."""
    if config is None:
        return b""
    return free_json(config.model_dump(exclude_none=True), "testRunGenerationConfig")


@router.get(
    "/testplans/{id}/testcycles",
    summary="List a test plan's test cycles",
    responses=schemas.page(records.TestCycle),
)
async def list_cycles(request: Request, id: int, view: Cycles, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.testmgmt.cycles.ListCycles(
        testmgmt_pb2.ListCyclesRequest(
            plan=id, page=page.message(), dates_with_time=dates_with_time(request)
        )
    )
    return await view.many([representations.test_cycle(r) for r in reply.records], reply.page_info)


@router.post(
    "/testplans/{id}/testcycles",
    status_code=201,
    summary="Create a test cycle and generate its test runs",
    responses=schemas.created(),
)
async def create_cycle(
    request: Request, id: int, body: TestCycleBody, version: Version, gw: Gw
) -> Response:
    view = View(request, gw, version, "testcycles")
    reply = await gw.upstreams.testmgmt.cycles.CreateCycle(
        testmgmt_pb2.CycleInput(
            plan=id,
            fields_json=free_json(body.fields, "fields"),
            generation_json=generation_json(body.testRunGenerationConfig or GenerationConfig()),
        )
    )
    return created(reply.id, view.location(f"testcycles/{reply.id}"))


@router.get(
    "/testcycles/{testCycleId}",
    summary="Get a test cycle",
    responses=schemas.one(records.TestCycle),
)
async def get_cycle(request: Request, testCycleId: int, view: Cycles, gw: Gw) -> Response:
    [cycle] = await get_records(gw, request, [testCycleId], testmgmt_pb2.CYCLE)
    return await view.one(representations.test_cycle(cycle))


@router.put(
    "/testcycles/{testCycleId}",
    summary="Update a test cycle and regenerate its test runs",
    responses=schemas.updated(),
)
async def update_cycle(testCycleId: int, body: TestCycleBody, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.cycles.UpdateCycle(
        testmgmt_pb2.CycleInput(
            id=testCycleId,
            fields_json=free_json(body.fields, "fields"),
            generation_json=generation_json(body.testRunGenerationConfig),
        )
    )
    return updated()


@router.patch(
    "/testcycles/{testCycleId}",
    summary="Change a test cycle with RFC 6902 operations and regenerate its test runs",
    responses=schemas.updated(),
    openapi_extra=schemas.array_body(PatchOperation),
)
async def patch_cycle(request: Request, testCycleId: int, gw: Gw) -> Response:
    operations = await request.body()
    await gw.upstreams.testmgmt.cycles.PatchCycle(
        testmgmt_pb2.PatchRequest(id=testCycleId, operations_json=operations)
    )
    return updated()


@router.delete(
    "/testcycles/{testCycleId}",
    status_code=204,
    summary="Delete a test cycle and its test runs",
    responses=schemas.deleted(),
)
async def delete_cycle(testCycleId: int, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.cycles.DeleteCycle(core_pb2.Id(id=testCycleId))
    return deleted()


@router.get(
    "/testcycles/{testCycleId}/testgroup/{testGroupId}",
    summary="Get a test group as a test cycle took it",
    responses=schemas.one(records.TestCycleTestGroup),
)
async def get_cycle_group(
    testCycleId: int, testGroupId: int, view: CycleGroups, gw: Gw
) -> Response:
    group = await gw.upstreams.testmgmt.cycles.GetCycleGroup(
        testmgmt_pb2.CycleGroupRef(cycle=testCycleId, group=testGroupId)
    )
    return await view.one(representations.cycle_group(group))
