"""Test plans, cycles and runs by id: the read the testplans, testcycles and testruns
routes share (the service's ``TestRecords``), the locks of plans and runs, and the test
records the items service keeps tags, links, comments and relationships for."""

from __future__ import annotations

from typing import Annotated, TypeAlias

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.attachments.v1 import attachments_pb2
from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import LockBody
from plumbline.gateway.deps import Gateway, Gw, View, dates_with_time, view_of
from plumbline.gateway.envelope import updated

router = APIRouter(prefix="/rest/{version}", tags=["testrecords"])

Kind: TypeAlias = testmgmt_pb2.Kind.ValueType
NOUNS = {
    testmgmt_pb2.PLAN: "test plan",
    testmgmt_pb2.CYCLE: "test cycle",
    testmgmt_pb2.RUN: "test run",
}
#: The test records with the families items have (tags, links, comments, relationships,
#: locks, activities): path segment and kind.
FAMILY_BASES: tuple[tuple[str, Kind], ...] = (
    ("testplans", testmgmt_pb2.PLAN),
    ("testruns", testmgmt_pb2.RUN),
)


async def get_records(
    gw: Gateway, request: Request, ids: list[int], kind: Kind
) -> list[testmgmt_pb2.TestRecord]:
    """Test records of ``kind`` (any, when unspecified) by id, dates as the caller asked;
    NotFound names a missing one."""
    reply = await gw.upstreams.testmgmt.records.GetRecords(
        testmgmt_pb2.GetRecordsRequest(ids=ids, kind=kind, dates_with_time=dates_with_time(request))
    )
    return list(reply.records)


def _vouched(record: testmgmt_pb2.TestRecord) -> items_pb2.ForeignItem:
    return items_pb2.ForeignItem(id=record.id, project=record.project, noun=NOUNS[record.kind])


async def foreign_item(gw: Gateway, id: int, kind: Kind) -> items_pb2.ForeignItem:
    """The test plan or run ``id`` as the items service takes it: read from testmgmt
    first, which answers 404 or refuses (401) as the caller's access demands."""
    reply = await gw.upstreams.testmgmt.records.GetRecords(
        testmgmt_pb2.GetRecordsRequest(ids=[id], kind=kind)
    )
    return _vouched(reply.records[0])


async def foreign_items(gw: Gateway, named: dict[str, int]) -> list[items_pb2.ForeignItem]:
    """The test plans and runs among the ids a body names (member -> id), read from
    testmgmt; items, and ids nobody owns, are the items service's to judge."""
    found = []
    for member, id in named.items():
        try:
            owner = (await gw.upstreams.items.ids.GetIdOwner(core_pb2.Id(id=id))).owner
        except NotFound:
            continue
        if owner == "attachments":
            reply_a = await gw.upstreams.attachments.attachments.GetAttachments(
                attachments_pb2.GetAttachmentsRequest(ids=[id], skip_missing=True)
            )
            if not reply_a.attachments:
                raise InvalidArgument(f"{member}: no attachment with id {id}.")
            found.append(
                items_pb2.ForeignItem(
                    id=id, project=reply_a.attachments[0].project, noun="attachment"
                )
            )
            continue
        if owner != "testmgmt":
            continue
        try:
            reply = await gw.upstreams.testmgmt.records.GetRecords(
                testmgmt_pb2.GetRecordsRequest(ids=[id])
            )
        except NotFound:
            raise InvalidArgument(f"{member}: no test plan or test run with id {id}.") from None
        record = reply.records[0]
        if record.kind not in dict(FAMILY_BASES).values():
            raise InvalidArgument(
                f"{member}: {id} is a {NOUNS[record.kind]}; only items, test plans and test "
                "runs can have comments and relationships."
            )
        found.append(_vouched(record))
    return found


Locks = Annotated[View, Depends(view_of("locks"))]


def _lock_routes(base: str, kind: Kind) -> None:
    noun = NOUNS[kind]

    @router.get(
        f"/{base}/{{id}}/lock", summary=f"Get a {noun}'s lock", responses=schemas.one(records.Lock)
    )
    async def get_lock(request: Request, id: int, view: Locks, gw: Gw) -> Response:
        [record] = await get_records(gw, request, [id], kind)
        return await view.one(representations.record_lock(record))

    @router.put(
        f"/{base}/{{id}}/lock", summary=f"Lock or unlock a {noun}", responses=schemas.updated()
    )
    async def put_lock(id: int, body: LockBody, gw: Gw) -> Response:
        await gw.upstreams.testmgmt.records.SetLock(
            testmgmt_pb2.SetLockRequest(id=id, locked=body.locked, kind=kind)
        )
        return updated()


for _base, _kind in FAMILY_BASES:
    _lock_routes(_base, _kind)
