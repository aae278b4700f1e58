"""(labs) ``/projects/{projectId}/reqif``: a project, an item's subtree, a filter's items
or a baseline as a ReqIF 1.2 document, made by the reports service as it is asked for and
streamed as it is written (``docs/contexts/reports.md#reqif``). The same export runs
apart as the ``reqif-export`` report, for a work identifier and progress."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Annotated

from fastapi import APIRouter, Depends, Path
from starlette.responses import Response, StreamingResponse

from plumbline.api.core.v1 import core_pb2
from plumbline.api.reports.v1 import reports_pb2 as pb
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import NO_DEADLINE
from plumbline.gateway import params, query, schemas
from plumbline.gateway.deps import Gw
from plumbline.gateway.envelope import attachment_disposition

router = APIRouter(prefix="/rest/{version}", tags=["reqif"])

#: The formats the export answers: name -> (the service's format, media type, suffix).
_FORMATS = {
    "reqif": ("REQIF", "application/xml", ".reqif"),
    "reqifz": ("REQIFZ", "application/zip", ".reqifz"),
}


def _format(values: Sequence[str]) -> str:
    value = params.single(values, "format")
    if value is None:
        return "reqif"
    if value.lower() not in _FORMATS:
        raise InvalidArgument(f"format must be reqif or reqifz, got {value!r}")
    return value.lower()


Format = Annotated[
    str,
    Depends(
        query.parameter(
            "format",
            {"type": "string", "enum": list(_FORMATS), "default": "reqif"},
            _format,
            description="reqif: the XML document; reqifz: the same, zipped.",
        )
    ),
]
Item = Annotated[
    int | None, Depends(query.integer("item", description="Only this item and what is under it."))
]
Filter = Annotated[
    int | None, Depends(query.integer("filter", description="Only the items this filter finds."))
]
Baseline = Annotated[
    int | None,
    Depends(query.integer("baseline", description="The items as this baseline holds them.")),
]


@router.get(
    "/projects/{projectId}/reqif",
    summary="Export a project's items as ReqIF 1.2 (labs)",
    description="The project's items (or item and what is under it, the items filter "
    "finds, or the items of baseline: at most one) as a ReqIF 1.2 document: item types as "
    "SPEC-OBJECT-TYPEs with their fields as attribute definitions (strings, rich text as "
    "XHTML, integers, booleans, dates, pick lists as enumerations, multi-selects as "
    "multi-valued ones), items as SPEC-OBJECTs identified by their global id, the tree as "
    "the specification's hierarchy and relationships between exported items as "
    "SPEC-RELATIONs typed by relationship type. Only what the caller may read; READ on "
    "the project is needed. Streamed as it is written; for a work identifier and "
    "progress, POST /reports/reqif-export.",
    responses={
        200: {
            "description": "The document (reqif) or a zip holding it (reqifz).",
            "content": {
                "application/xml": {"schema": {"type": "string", "format": "binary"}},
                "application/zip": {"schema": {"type": "string", "format": "binary"}},
            },
        },
        **schemas.errors(400, 401, 404),
    },
)
async def export_reqif(
    gw: Gw,
    fmt: Format,
    item: Item,
    filter_id: Filter,
    baseline: Baseline,
    project: Annotated[int, Path(alias="projectId", description="The project's id.")],
) -> Response:
    # The project must exist and be readable: its read answers 404 or 401 as for any.
    found = await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=[project]))
    service_format, media_type, suffix = _FORMATS[fmt]
    request = pb.ExportReqifRequest(project=project, format=service_format)
    for name, value in (("item", item), ("filter", filter_id), ("baseline", baseline)):
        if value is not None:
            setattr(request, name, value)
    chunks = gw.upstreams.reports.reports.ExportReqif(request, timeout=NO_DEADLINE)
    # What the export refuses (a filter or item that is not there) it refuses before its
    # first piece: read that one here, so the refusal is an answer of its own.
    first = await anext(aiter(chunks), None)

    async def body() -> AsyncIterator[bytes]:
        if first is not None:
            yield first.data
            async for chunk in chunks:
                yield chunk.data

    key = found.projects[0].project_key if found.projects else str(project)
    headers = {"Content-Disposition": attachment_disposition(f"{key}{suffix}")}
    return StreamingResponse(body(), headers=headers, media_type=media_type)
