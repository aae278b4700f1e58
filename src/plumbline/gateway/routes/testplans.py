"""``/testplans``: test plans of a project, and whether they are archived."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.core.v1 import core_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.errors import InvalidArgument
from plumbline.common.jsonvalues import free_json
from plumbline.gateway import query, records, representations, schemas
from plumbline.gateway.bodies import ArchivedBody, PatchOperation, TestPlanBody
from plumbline.gateway.deps import Gw, Paging, Version, View, dates_with_time, view_of
from plumbline.gateway.envelope import created, deleted, updated
from plumbline.gateway.routes.testrecords import get_records

router = APIRouter(prefix="/rest/{version}", tags=["testplans"])

Plans = Annotated[View, Depends(view_of("testplans"))]


@router.get(
    "/testplans", summary="List a project's test plans", responses=schemas.page(records.TestPlan)
)
async def list_plans(
    request: Request, view: Plans, gw: Gw, page: Paging, project: query.RequiredProject
) -> Response:
    reply = await gw.upstreams.testmgmt.plans.ListPlans(
        testmgmt_pb2.ListPlansRequest(
            project=project, page=page.message(), dates_with_time=dates_with_time(request)
        )
    )
    return await view.many([representations.test_plan(r) for r in reply.records], reply.page_info)


@router.post(
    "/testplans", status_code=201, summary="Create a test plan", responses=schemas.created()
)
async def create_plan(request: Request, body: TestPlanBody, version: Version, gw: Gw) -> Response:
    if body.project is None:
        raise InvalidArgument("project is required.")
    view = View(request, gw, version, "testplans")
    reply = await gw.upstreams.testmgmt.plans.CreatePlan(
        testmgmt_pb2.PlanInput(project=body.project, fields_json=free_json(body.fields, "fields"))
    )
    return created(reply.id, view.location(f"testplans/{reply.id}"))


@router.get("/testplans/{id}", summary="Get a test plan", responses=schemas.one(records.TestPlan))
async def get_plan(request: Request, id: int, view: Plans, gw: Gw) -> Response:
    [plan] = await get_records(gw, request, [id], testmgmt_pb2.PLAN)
    return await view.one(representations.test_plan(plan))


@router.put("/testplans/{id}", summary="Update a test plan", responses=schemas.updated())
async def update_plan(id: int, body: TestPlanBody, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.plans.UpdatePlan(
        testmgmt_pb2.UpdateRequest(id=id, fields_json=free_json(body.fields, "fields"))
    )
    return updated()


@router.patch(
    "/testplans/{id}",
    summary="Change a test plan with RFC 6902 operations",
    responses=schemas.updated(),
    openapi_extra=schemas.array_body(PatchOperation),
)
async def patch_plan(request: Request, id: int, gw: Gw) -> Response:
    operations = await request.body()
    await gw.upstreams.testmgmt.plans.PatchPlan(
        testmgmt_pb2.PatchRequest(id=id, operations_json=operations)
    )
    return updated()


@router.delete(
    "/testplans/{id}", status_code=204, summary="Delete a test plan", responses=schemas.deleted()
)
async def delete_plan(id: int, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.plans.DeletePlan(core_pb2.Id(id=id))
    return deleted()


@router.put(
    "/testplans/{id}/archived",
    summary="Archive a test plan or take it out of the archive",
    responses=schemas.updated(),
)
async def set_archived(id: int, body: ArchivedBody, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.plans.SetArchived(
        testmgmt_pb2.SetArchivedRequest(id=id, archived=body.archived)
    )
    return updated()
