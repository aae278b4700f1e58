"""Test plans, cycles and runs by id: the read the testplans, testcycles and testruns
routes share (the service's ``TestRecords``)."""

from __future__ import annotations

from starlette.requests import Request

from plumbline.gateway.deps import Gateway, dates_with_time
from plumbline.testmgmt.v1 import testmgmt_pb2


async def get_records(
    gw: Gateway, request: Request, ids: list[int], kind: testmgmt_pb2.Kind.ValueType
) -> list[testmgmt_pb2.TestRecord]:
    """Test records of ``kind`` (any, when unspecified) by id, dates as the caller asked;
    NotFound names a missing one."""
    reply = await gw.upstreams.testmgmt.records.GetRecords(
        testmgmt_pb2.GetRecordsRequest(ids=ids, kind=kind, dates_with_time=dates_with_time(request))
    )
    return list(reply.records)
