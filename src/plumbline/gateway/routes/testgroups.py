"""``/testplans/{id}/testgroups``: a test plan's test groups and the test cases in them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import (
    MAX_GROUP_CASES,
    TestGroupBody,
    TestGroupTestCaseBody,
    TestGroupTestCasesBody,
)
from plumbline.gateway.deps import (
    LABS_ONLY,
    Gateway,
    Gw,
    Paging,
    Version,
    View,
    dates_with_time,
    view_of,
)
from plumbline.gateway.envelope import created, deleted, updated

router = APIRouter(prefix="/rest/{version}", tags=["testplans"])

Groups = Annotated[View, Depends(view_of("testgroups"))]
Items = Annotated[View, Depends(view_of("items"))]


def _group_input(plan: int, group: int, body: TestGroupBody) -> testmgmt_pb2.GroupInput:
    message = testmgmt_pb2.GroupInput(plan=plan, group=group, name=body.name)
    if body.assignedTo is not None:
        message.assigned_to = body.assignedTo
    return message


async def _test_cases(gw: Gateway, request: Request, ids: list[int]) -> list[records.Item]:
    """The items of ``ids`` in that order (the items service answers in its own)."""
    if not ids:
        return []
    reply = await gw.upstreams.items.items.GetItems(
        items_pb2.GetItemsRequest(ids=ids, dates_with_time=dates_with_time(request))
    )
    by_id = {i.id: representations.item(i) for i in reply.items}
    return [by_id[i] for i in ids if i in by_id]


@router.get(
    "/testplans/{id}/testgroups",
    summary="List a test plan's test groups",
    responses=schemas.page(records.TestGroup),
)
async def list_groups(id: int, view: Groups, gw: Gw, page: Paging) -> Response:
    reply = await gw.upstreams.testmgmt.groups.ListGroups(
        testmgmt_pb2.ListGroupsRequest(plan=id, page=page.message())
    )
    return await view.many([representations.test_group(g) for g in reply.groups], reply.page_info)


@router.post(
    "/testplans/{id}/testgroups",
    status_code=201,
    summary="Create a test group in a test plan",
    responses=schemas.created(),
)
async def create_group(
    request: Request, id: int, body: TestGroupBody, version: Version, gw: Gw
) -> Response:
    view = View(request, gw, version, "testgroups")
    reply = await gw.upstreams.testmgmt.groups.CreateGroup(_group_input(id, 0, body))
    return created(reply.id, view.location(f"testplans/{id}/testgroups/{reply.id}"))


@router.get(
    "/testplans/{id}/testgroups/{testGroupId}",
    summary="Get a test group",
    responses=schemas.one(records.TestGroup),
)
async def get_group(id: int, testGroupId: int, view: Groups, gw: Gw) -> Response:
    group = await gw.upstreams.testmgmt.groups.GetGroup(
        testmgmt_pb2.GroupRef(plan=id, group=testGroupId)
    )
    return await view.one(representations.test_group(group))


@router.put(
    "/testplans/{id}/testgroups/{testGroupId}",
    summary="Rename or reassign a test group",
    responses=schemas.updated(),
)
async def update_group(id: int, testGroupId: int, body: TestGroupBody, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.groups.UpdateGroup(_group_input(id, testGroupId, body))
    return updated()


@router.delete(
    "/testplans/{id}/testgroups/{testGroupId}",
    status_code=204,
    summary="Delete a test group",
    responses=schemas.deleted(),
)
async def delete_group(id: int, testGroupId: int, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.groups.DeleteGroup(
        testmgmt_pb2.GroupRef(plan=id, group=testGroupId)
    )
    return deleted()


@router.get(
    "/testplans/{id}/testgroups/{testGroupId}/testcases",
    summary="List a test group's test cases in order",
    responses=schemas.page(records.Item),
)
async def list_cases(
    request: Request, id: int, testGroupId: int, view: Items, gw: Gw, page: Paging
) -> Response:
    reply = await gw.upstreams.testmgmt.groups.ListGroupCases(
        testmgmt_pb2.ListGroupCasesRequest(plan=id, group=testGroupId, page=page.message())
    )
    cases = await _test_cases(gw, request, list(reply.test_cases))
    return await view.many(cases, reply.page_info)


@router.post(
    "/testplans/{id}/testgroups/{testGroupId}/testcases",
    status_code=201,
    summary="Add a test case to a test group",
    responses=schemas.created(),
)
async def add_case(
    request: Request,
    id: int,
    testGroupId: int,
    body: TestGroupTestCaseBody,
    version: Version,
    gw: Gw,
) -> Response:
    view = View(request, gw, version, "items")
    await gw.upstreams.testmgmt.groups.AddGroupCase(
        testmgmt_pb2.GroupCase(plan=id, group=testGroupId, test_case=body.testCase)
    )
    path = f"testplans/{id}/testgroups/{testGroupId}/testcases/{body.testCase}"
    return created(body.testCase, view.location(path))


@router.post(
    "/testplans/{id}/testgroups/{testGroupId}/testcases/batch",
    summary="Add many test cases to a test group",
    description=f"At most {MAX_GROUP_CASES} test cases, appended in the order given, each "
    "checked as a single add checks it; all of them are added or none.",
    responses=schemas.updated(records.TestCasesAdded),
    dependencies=[LABS_ONLY],
)
async def add_cases(id: int, testGroupId: int, body: TestGroupTestCasesBody, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.groups.AddGroupCases(
        testmgmt_pb2.GroupCases(plan=id, group=testGroupId, test_cases=body.testCases)
    )
    added: records.TestCasesAdded = {"added": len(body.testCases)}
    return updated(added)


@router.get(
    "/testplans/{id}/testgroups/{testGroupId}/testcases/{testCaseId}",
    summary="Get a test case of a test group",
    responses=schemas.one(records.Item),
)
async def get_case(
    request: Request, id: int, testGroupId: int, testCaseId: int, view: Items, gw: Gw
) -> Response:
    await gw.upstreams.testmgmt.groups.CheckGroupCase(
        testmgmt_pb2.GroupCase(plan=id, group=testGroupId, test_case=testCaseId)
    )
    reply = await gw.upstreams.items.items.GetItems(
        items_pb2.GetItemsRequest(ids=[testCaseId], dates_with_time=dates_with_time(request))
    )
    return await view.one(representations.item(reply.items[0]))


@router.delete(
    "/testplans/{id}/testgroups/{testGroupId}/testcases/{testCaseId}",
    status_code=204,
    summary="Remove a test case from a test group",
    responses=schemas.deleted(),
)
async def remove_case(id: int, testGroupId: int, testCaseId: int, gw: Gw) -> Response:
    await gw.upstreams.testmgmt.groups.RemoveGroupCase(
        testmgmt_pb2.GroupCase(plan=id, group=testGroupId, test_case=testCaseId)
    )
    return deleted()
