"""``POST /rest/labs/testcycles/{id}/results``: a CI pipeline's JUnit XML report applied
to a test cycle's runs in one call.

The report is the request body (any XML content type) or the ``file`` part of a
multipart form (a form without one is refused: no other part is taken for it). It goes on to the
testmgmt service in chunks over a client-streamed call, which parses it as it arrives.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common import int64
from plumbline.common.errors import InvalidArgument
from plumbline.common.junit import REFERENCE_PROPERTIES
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.deps import Gw
from plumbline.gateway.envelope import updated
from plumbline.gateway.uploads import FileUpload, Pace, limited, refuse_declared, send_stream

router = APIRouter(prefix="/rest/{version}", tags=["testcycles"])

CHUNK = 64 * 1024
MULTIPART = "multipart/form-data"

#: The properties a <testcase> may name its test case with, in the order they are tried.
PROPERTIES = ", ".join(REFERENCE_PROPERTIES)


WHAT = "A JUnit report"


def _declared_size(request: Request, limit: int) -> None:
    """A 413 at once for a body that says it is longer than ``limit``."""
    refuse_declared(request, limit, WHAT)


def _report(request: Request, pace: Pace, limit: int) -> AsyncIterator[bytes]:
    """The report's bytes in chunks as they arrive, from the body or from the form's
    ``file`` part (a form without one is a 400 before the call starts); a 413 once more
    than ``limit`` bytes have come, a 408 for a body that comes too slowly."""
    return limited(_source(request, pace), limit, WHAT, CHUNK)


async def _source(request: Request, pace: Pace) -> AsyncIterator[bytes]:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == MULTIPART:
        form = FileUpload(request, pace, named_only=True)
        await form.open()
        async for chunk in form.chunks(1):
            yield chunk
    else:
        async for chunk in pace.reader(request.stream()):
            yield chunk


@router.post(
    "/testcycles/{testCycleId}/results",
    summary="Record a JUnit XML report's results in a test cycle's runs",
    description=(
        "The body is a JUnit XML report (Maven Surefire, pytest, Jest, go-junit-report), "
        "as the request body or as the file part of a multipart form. Each <testcase> "
        "is matched to the cycle's runs of one test case by a property naming the test "
        f"case (tried in this order: {PROPERTIES}; the value is a document key, a global "
        "id or an id), else by the run's exact name. <failure> and <error> give FAILED, "
        "<skipped> NOT_RUN, none PASSED; messages and output go to actualResults. The "
        "whole report is applied at once or not at all. With an Idempotency-Key header, "
        "a repeated upload of the same report changes nothing and answers the first answer "
        "(replayed: true); the same key with a different report is a 422. The report "
        "streams as an upload does, under PLUMBLINE_MAX_REPORT_BYTES (413) and the "
        "transfer limits (no API slot; 408 below the minimum rate, 429 past the uploads "
        "a user may send at once)."
    ),
    responses={**schemas.updated(records.IngestAnswer), **schemas.errors(408, 413, 422)},
    openapi_extra=schemas.report_body(),
)
async def ingest_results(
    request: Request,
    testCycleId: int,
    gw: Gw,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            max_length=200,
            description=(
                "Makes a repeated upload of the same report answer the first answer; "
                "the same key with another report is refused (422)."
            ),
        ),
    ] = None,
) -> Response:
    if not int64.fits(testCycleId):
        # Checked here: the number would otherwise fail inside the streamed call.
        raise InvalidArgument(
            f"testCycleId is out of range: at most {int64.MAX}, got {testCycleId}."
        )
    limit = gw.settings.max_report_bytes
    _declared_size(request, limit)
    report = _report(request, Pace.of(gw.settings), limit)
    # The form's file part is found (or refused, 400) before the call starts.
    first = await anext(report, b"")

    async def chunks() -> AsyncIterator[testmgmt_pb2.ReportChunk]:
        yield testmgmt_pb2.ReportChunk(
            test_cycle=testCycleId, idempotency_key=idempotency_key or ""
        )
        if first:
            yield testmgmt_pb2.ReportChunk(data=first)
        async for data in report:
            yield testmgmt_pb2.ReportChunk(data=data)

    reply = await send_stream(
        gw.upstreams.testmgmt.results.IngestJUnit,
        chunks(),
        idle=gw.settings.body_timeout,
        answer_within=gw.settings.grpc_timeout,
        service="testmgmt",
    )
    return updated(representations.ingest_answer(reply))
