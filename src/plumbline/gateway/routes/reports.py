"""(labs) ``/reports``: the contract's two operations (``GET /reports/metadata``, ``POST
/reports/{reportId}``, which answers a work identifier at once) and the works they start,
made by the reports service apart from API requests (``docs/contexts/reports.md``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from plumbline.api.core.v1 import core_pb2
from plumbline.api.reports.v1 import reports_pb2 as pb
from plumbline.common.rpc import NO_DEADLINE
from plumbline.gateway import records, representations, schemas
from plumbline.gateway.bodies import ReportBody
from plumbline.gateway.deps import Gw, Paging, Version
from plumbline.gateway.envelope import accepted, attachment_disposition, ok
from plumbline.gateway.includes import base_url
from plumbline.gateway.query import RequiredProject

router = APIRouter(prefix="/rest/{version}", tags=["reports"])


def work_of(request: Request, gw: Gw, version: str, message: pb.Work) -> records.ReportWork:
    """The work as the API shows it, with its file's address once it has one (DONE, or
    FAILED with the reasons as its file: a refused import)."""
    has_file = message.status == "DONE" or message.HasField("file_name")
    file = f"{works_url(request, gw, version)}/{message.id}/file" if has_file else None
    return representations.report_work(message, file)


def works_url(request: Request, gw: Gw, version: str) -> str:
    return f"{base_url(request, gw.settings.public_url)}/rest/{version}/reports/works"


@router.get(
    "/reports/metadata",
    summary="The reports a project offers, with their parameters (labs)",
    responses={**schemas.page(records.ReportMetadata), **schemas.errors(400, 401, 404)},
)
async def report_metadata(gw: Gw, project: RequiredProject) -> Response:
    # The project must exist and be readable: its read answers 404 or 401 as for any.
    await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=[project]))
    reply = await gw.upstreams.reports.reports.ListReports(pb.ListReportsRequest(project=project))
    data = [representations.report(r) for r in reply.reports]
    return ok(data, page=(0, len(data), len(data)))


@router.post(
    "/reports/{reportId}",
    status_code=202,
    summary="Start a report; answers its work identifier at once (labs)",
    description="The report is made apart from API requests, from the data the caller "
    "may read, and kept for a week: follow meta.location (GET) for its progress; when "
    "its status is DONE, data.file serves the file (XLSX, CSV or HTML; REQIF or REQIFZ "
    "for reqif-export; the report's first format when left out). A parameter the "
    "report does not take, a missing required one, or one of the wrong type is a 400 at "
    "once; a problem found while making it (a test cycle that does not exist) makes the "
    "work FAILED with the reason in message.",
    responses={
        **schemas.accepted(records.ReportWork, "Started: the work, and where to follow it."),
        **schemas.errors(400, 401, 404),
    },
)
async def start_report(
    request: Request, reportId: str, body: ReportBody, gw: Gw, version: Version
) -> Response:
    await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=[body.project]))
    reply = await gw.upstreams.reports.reports.StartReport(
        pb.StartReportRequest(
            report=reportId,
            project=body.project,
            format=body.format or "",
            parameters_json=orjson.dumps(body.parameters),
        )
    )
    location = f"{works_url(request, gw, version)}/{reply.id}"
    return accepted(location, work_of(request, gw, version, reply))


@router.get(
    "/reports/works",
    summary="The caller's reports, newest first (labs)",
    description="Every user's to an organization administrator.",
    responses=schemas.page(records.ReportWork),
)
async def list_works(request: Request, gw: Gw, page: Paging, version: Version) -> Response:
    reply = await gw.upstreams.reports.reports.ListWorks(page.message())
    info = reply.page_info
    return ok(
        [work_of(request, gw, version, w) for w in reply.works],
        page=(info.start_index, info.result_count, info.total_results),
    )


@router.get(
    "/reports/works/{workId}",
    summary="A report's progress, and its file once done (labs)",
    responses={**schemas.one(records.ReportWork), **schemas.errors(404)},
)
async def get_work(request: Request, workId: str, gw: Gw, version: Version) -> Response:
    reply = await gw.upstreams.reports.reports.GetWork(pb.WorkRef(id=workId))
    return ok(work_of(request, gw, version, reply))


@router.get(
    "/reports/works/{workId}/file",
    summary="A finished report's file (labs)",
    responses={
        200: {
            "description": "The file: XLSX, CSV or HTML as the report was asked for.",
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        },
        **schemas.errors(404),
    },
)
async def work_file(workId: str, gw: Gw) -> Response:
    work = await gw.upstreams.reports.reports.GetWork(pb.WorkRef(id=workId))
    chunks = gw.upstreams.reports.reports.ReadWorkFile(pb.WorkRef(id=workId), timeout=NO_DEADLINE)
    first = await anext(aiter(chunks), None)  # a work without a file fails here, as a 404

    async def body() -> AsyncIterator[bytes]:
        if first is not None:
            yield first.data
            async for chunk in chunks:
                yield chunk.data

    headers = {
        "Content-Disposition": attachment_disposition(work.file_name),
        "Content-Length": str(work.size),
    }
    return StreamingResponse(body(), headers=headers, media_type=work.media_type)
