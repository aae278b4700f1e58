"""``plumbline.reports.v1.Reports``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from plumbline.api.reports.v1 import reports_pb2 as pb
from plumbline.api.reports.v1 import reports_pb2_grpc
from plumbline.common.access import Action
from plumbline.common.context import require_principal
from plumbline.common.dates import format_datetime
from plumbline.common.errors import InvalidArgument, NotFound, PermissionDenied
from plumbline.common.rpc import Context, message_of, page_info, page_of
from plumbline.services.reports import reqif
from plumbline.services.reports.catalog import REPORTS, checked, spec_of
from plumbline.services.reports.reading import Reader, ReportFailed
from plumbline.services.reports.works import Works


def _date(value: Any) -> str | None:
    return None if value is None else format_datetime(value)


def work_message(row: Any) -> pb.Work:
    """A works row as its message (dates in the API's form)."""
    return message_of(
        row,
        pb.Work,
        parameters_json=row.parameters_json.encode(),
        created_date=format_datetime(row.created_at),
        started_date=_date(row.started_at),
        finished_date=_date(row.finished_at),
        data_from=_date(row.data_from),
        data_to=_date(row.data_to),
    )


class ReportsServicer(reports_pb2_grpc.ReportsServicer):
    """Thin mapping onto ``Works`` and the report catalog."""

    def __init__(
        self, works: Works, queued: Callable[[], None], reader_for: Callable[[int], Reader]
    ) -> None:
        self.works = works
        self.queued = queued
        self.reader_for = reader_for

    async def ListReports(self, request: pb.ListReportsRequest, context: Context) -> pb.ReportList:
        return pb.ReportList(reports=[message_of(spec, pb.Report) for spec in REPORTS.values()])

    async def StartReport(self, request: pb.StartReportRequest, context: Context) -> pb.Work:
        try:
            parameters = json.loads(request.parameters_json or b"{}")
        except ValueError:
            raise InvalidArgument("parameters is not JSON") from None
        row = await self.works.start(request.report, request.project, request.format, parameters)
        self.queued()
        return work_message(row)

    async def GetWork(self, request: pb.WorkRef, context: Context) -> pb.Work:
        return work_message(await self.works.get(request.id))

    async def ListWorks(self, request: Any, context: Context) -> pb.WorkPage:
        start, size = page_of(request)
        rows, total = await self.works.page(start, size)
        return pb.WorkPage(
            works=[work_message(r) for r in rows], page_info=page_info(start, len(rows), total)
        )

    async def ExportReqif(
        self, request: pb.ExportReqifRequest, context: Context
    ) -> AsyncIterator[pb.FileChunk]:
        given = {
            name: getattr(request, name)
            for name in ("item", "filter", "baseline")
            if request.HasField(name)
        }
        values = checked(spec_of("reqif-export"), request.format, given)
        access = await self.works.access.current()
        access.require(Action.READ, request.project, f"project {request.project}")
        reader = self.reader_for(require_principal().user_id)
        pieces = reqif.export(
            reader, request.project, reqif.scope_of(values), request.format == "REQIFZ"
        )
        try:
            async for data in pieces:
                yield pb.FileChunk(data=data)
        except ReportFailed as exc:
            raise _refusal(exc) from None

    async def StartImport(
        self, request_iterator: AsyncIterator[pb.ImportInput], context: Context
    ) -> pb.Work:
        first = await anext(request_iterator, None)
        if first is None or not first.project:
            raise InvalidArgument("the import's first message must name the project")
        try:
            parameters = json.loads(first.parameters_json or b"{}")
        except ValueError:
            raise InvalidArgument("parameters is not JSON") from None
        if not isinstance(parameters, dict):
            raise InvalidArgument("parameters is a JSON object")

        async def document() -> AsyncIterator[bytes]:
            yield first.data
            async for more in request_iterator:
                yield more.data

        row = await self.works.start_import(first.project, parameters, document())
        self.queued()
        return work_message(row)

    async def ReadWorkFile(
        self, request: pb.WorkRef, context: Context
    ) -> AsyncIterator[pb.FileChunk]:
        async for data in self.works.chunks(request.id):
            yield pb.FileChunk(data=data)


def _refusal(failed: ReportFailed) -> Exception:
    """What the API answered a read of the export, as the export's own answer."""
    message = str(failed)
    if failed.status == 404:
        return NotFound(message)
    if failed.status in (401, 403):
        return PermissionDenied(message)
    return InvalidArgument(message)
