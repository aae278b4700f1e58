"""(labs) ``/projects/{projectId}/reqif``: a project, an item's subtree, a filter's items
or a baseline as a ReqIF 1.2 document, made by the reports service as it is asked for and
streamed as it is written (``docs/contexts/reports.md#reqif``). The same export runs
apart as the ``reqif-export`` report, for a work identifier and progress."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, cast

import orjson
from fastapi import APIRouter, Depends, Path
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.reports.v1 import reports_pb2 as pb
from plumbline.common import int64
from plumbline.common.errors import InvalidArgument, TooLarge
from plumbline.common.reqif import NOT_ITEMS
from plumbline.common.rpc import NO_DEADLINE, every_page
from plumbline.gateway import params, query, records, reqif_files, reqif_in, schemas
from plumbline.gateway.deps import Gateway, Gw, Version
from plumbline.gateway.envelope import accepted, attachment_disposition, unmapped, updated
from plumbline.gateway.routes.imports import bulk_import
from plumbline.gateway.routes.reports import work_of, works_url
from plumbline.gateway.uploads import limited, refuse_declared, send_stream

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
            description="reqif: the XML document; reqifz: the same, zipped, followed by "
            "the exported items' attachments' files (files/<sha256 prefix>/<name>, named by "
            "each item's PL.Attachments).",
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


#: Items read a page at a time when looking for the document's identifiers.
_PAGE = 1_000


@router.post(
    "/projects/{projectId}/reqif",
    summary="Import a ReqIF 1.2 document into a project (labs)",
    description="The body is the .reqif (XML) or .reqifz (zip) file, or a multipart form "
    "with the file in part file and a mapping document (JSON) in part mapping: "
    '{"types": {"<SPEC-OBJECT-TYPE name or id>": "<item type key or id>"}, '
    '"attributes": {"<attribute name or id>": "<field name>", or null to leave it out}, '
    '"values": {"<enumeration value name or id>": "<pick list option name>"}, '
    '"relationTypes": {"<SPEC-RELATION-TYPE name or id>": "<relationship type name>"}}. '
    "What the mapping does not name is mapped by name (a type by the item type's display "
    "name or key, an attribute by the field's name or label, ReqIF.Name to name and "
    "ReqIF.Text to description, a value by the option's name). What cannot be mapped "
    "is answered (400) before anything is written, with a suggested configuration and "
    "mapping. Each SPEC-OBJECT becomes an item whose global id is its identifier, in the "
    "specification's tree (a folder per specification when there are several, named by "
    "its identifier), and each SPEC-RELATION a relationship. A newer revision of a "
    "document imported before updates it: an object whose identifier is an item's global "
    "id updates that item with a new version only where a field it fills differs "
    "(changed) or its parent does (moved); the others are added; each parent's children "
    "take the document's order (reordered: a place among siblings is not a version); the "
    "project's items of the item types the import writes that the document does not "
    "hold are left, as are relationships between its items, of the types it maps, that "
    "it no longer has: listed, and deleted (an item with what is under it) only with "
    "deleteLeft=true. Written by the bulk import, all or nothing. In a .reqifz, the files "
    "an object's XHTML names (<object data=...> with a path inside the archive, as "
    "the export's PL.Attachments) become attachments of its item once the items are "
    "written: one per file, linked to each item naming it; a file an item has already "
    "(same name and content) is left, other content under the same name replaces its "
    "file (files in the answer). dryRun=true "
    "answers all of it and writes nothing. READ_WRITE on the project is needed (READ for "
    "a dry run). With async=true the document is kept and the import made apart: the "
    "answer is 202 with a work (as POST /reports/{reportId} starts one) to follow at "
    "meta.location for its progress; its file is this answer once it is DONE, or the "
    "refusal with its errors and suggestion when it is FAILED.",
    responses={
        **schemas.updated(records.ReqifImportAnswer),
        **schemas.accepted(records.ReportWork, "async=true: the import's work, to follow."),
        **schemas.unmapped(
            "Refused; nothing was written: what cannot be mapped (errors, suggested), or "
            "why the file or the mapping is refused."
        ),
        **schemas.errors(401, 404, 413),
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/xml": {"schema": {"type": "string", "format": "binary"}},
                "application/zip": {"schema": {"type": "string", "format": "binary"}},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file"],
                        "properties": {
                            "file": {"type": "string", "format": "binary"},
                            "mapping": {"type": "string", "description": "The mapping (JSON)."},
                        },
                    }
                },
            },
        }
    },
)
async def import_reqif(
    request: Request,
    gw: Gw,
    dry_run: DryRun,
    delete_left: DeleteLeft,
    apart: Apart,
    version: Version,
    project: Annotated[int, Path(alias="projectId", description="The project's id.")],
) -> Response:
    if not 0 < project <= int64.MAX:
        raise InvalidArgument(f"projectId is out of range: 1 to {int64.MAX}, got {project}.")
    limit = gw.settings.max_import_bytes
    refuse_declared(request, limit, WHAT)
    data, mapping, name = await _received(request, limit)
    if apart:
        flags = {"dryRun": dry_run, "deleteLeft": delete_left, "fileName": name}
        return await _start_apart(request, gw, version, project, data, {"mapping": mapping} | flags)
    document = await asyncio.to_thread(_read, data, limit)
    target = await _target(gw)
    existing = await _existing(gw, project)
    planned = await asyncio.to_thread(
        reqif_in.plan, document, target, mapping, existing, delete_left
    )
    naming = any(o.files for o in document.objects.values())
    attachments = await reqif_files.held(gw, project) if naming and existing.items else {}
    if planned.unmapped:
        count = len(planned.unmapped)
        return unmapped(
            f"{count} thing{'s' if count != 1 else ''} of the document cannot be mapped; "
            f"nothing was imported. {planned.unmapped[0]}",
            planned.unmapped,
            {"configuration": planned.suggested_config, "mapping": planned.suggested_mapping},
        )
    files = (
        await asyncio.to_thread(reqif_files.planned, document, data, planned, attachments)
        if naming
        else reqif_files.Files()
    )
    answer = _answer(project, dry_run, delete_left, planned)
    answer["files"] = cast(records.ReqifFiles, files.counts())
    if dry_run or not (planned.lines or files.attached or files.replaced):
        return updated(answer)
    if not planned.lines:
        await reqif_files.write(gw, project, data, files, {})
        return updated(answer)

    async def lines() -> AsyncIterator[bytes]:
        for start in range(0, len(planned.lines), 1_000):
            yield b"\n".join(planned.lines[start : start + 1_000]) + b"\n"

    reply = await bulk_import(gw, project, lines())
    if reply.bad_count:
        first = reply.bad[0]
        said = (
            orjson.loads(planned.lines[first.line - 1]) if first.line <= len(planned.lines) else {}
        )
        what = next(
            (said[k] for k in ("key", "item", "fromItem", "deleteItem") if k in said), first.line
        )
        raise InvalidArgument(
            f"the document's {what!r} cannot be imported: {first.message} "
            f"({reply.bad_count} refused; nothing was imported)"
        )
    answer["items"], answer["relationships"] = reply.items, reply.relationships
    answer["firstItemId"], answer["versions"] = reply.first_item_id, reply.versions
    answer["deleted"], answer["relationshipsDeleted"] = reply.deleted, reply.relationships_deleted
    ids = {key: reply.first_item_id + k for k, key in enumerate(planned.new_keys)}
    await reqif_files.write(gw, project, data, files, ids)
    return updated(answer)


def _answer(
    project: int, dry_run: bool, delete_left: bool, planned: reqif_in.Plan
) -> records.ReqifImportAnswer:
    """What the import will do (a dry run's answer; a real one's counts follow)."""
    return {
        "project": project,
        "dryRun": dry_run,
        "items": planned.items,
        "relationships": planned.relationships,
        "byType": planned.by_type,
        "firstItemId": 0,
        "versions": planned.versions,
        "added": planned.added,
        "changed": cast(list[records.ReqifChanged], planned.changed),
        "moved": cast(list[records.ReqifMoved], planned.moved),
        "unchanged": planned.unchanged,
        "reordered": cast(list[records.ReqifReordered], planned.reordered),
        "files": {"attached": 0, "links": 0, "replaced": 0, "unchanged": 0},
        "left": cast(list[records.ReqifLeft], planned.left),
        "relationshipsLeft": cast(list[records.ReqifRelationshipLeft], planned.relationships_left),
        # What a dry run would delete; a real one says what it did.
        "deleted": len(planned.left) if delete_left else 0,
        "relationshipsDeleted": len(planned.relationships_left) if delete_left else 0,
    }


DryRun = Annotated[
    bool,
    Depends(query.boolean("dryRun", description="Answer what would be imported; write nothing.")),
]
Apart = Annotated[
    bool,
    Depends(
        query.boolean(
            "async",
            description="Keep the document and import it apart: 202 with a work to follow.",
        )
    ),
]
DeleteLeft = Annotated[
    bool,
    Depends(
        query.boolean(
            "deleteLeft",
            description="Delete the items and relationships the document no longer holds "
            "(listed in left and relationshipsLeft either way).",
        )
    ),
]
WHAT = "A ReqIF document"


async def _start_apart(
    request: Request,
    gw: Gateway,
    version: str,
    project: int,
    data: bytes,
    parameters: dict[str, object],
) -> Response:
    """Hands the document to the reports service, which imports it as the caller."""
    # The project must exist and be readable: its read answers 404 or 401 as for any.
    await gw.upstreams.items.projects.GetProjects(core_pb2.IdList(ids=[project]))

    async def messages() -> AsyncIterator[pb.ImportInput]:
        yield pb.ImportInput(project=project, parameters_json=orjson.dumps(parameters))
        for start in range(0, len(data), _CHUNK):
            yield pb.ImportInput(data=data[start : start + _CHUNK])

    work = await send_stream(
        gw.upstreams.reports.reports.StartImport,
        messages(),
        idle=gw.settings.body_timeout,
        answer_within=gw.settings.import_timeout,
        service="reports",
    )
    return accepted(
        f"{works_url(request, gw, version)}/{work.id}", work_of(request, gw, version, work)
    )


_CHUNK = 1024 * 1024


async def _received(request: Request, limit: int) -> tuple[bytes, dict[str, object], str]:
    """The file, the mapping (empty without one) and the file's name, the file at most
    ``limit`` bytes."""
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form(max_files=2, max_fields=4, max_part_size=limit)
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise InvalidArgument("the form needs the ReqIF file in part file")
        data, name = await upload.read(limit + 1), upload.filename or "document.reqif"
        raw = form.get("mapping")
        text = raw if isinstance(raw, str) else (await raw.read(limit)).decode() if raw else ""
        mapping = _mapping(text)
    else:
        pieces = [p async for p in limited(request.stream(), limit, WHAT, 256 * 1024)]
        data, mapping, name = b"".join(pieces), {}, "document.reqif"
    if len(data) > limit:
        raise TooLarge(f"{WHAT} must be at most {limit} bytes.")
    if not data.strip():
        raise InvalidArgument("the body is empty: send the .reqif or .reqifz file")
    return data, mapping, name


def _mapping(text: str) -> dict[str, object]:
    if not text.strip():
        return {}
    try:
        found = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InvalidArgument(f"mapping is not JSON: {exc}") from None
    if not isinstance(found, dict):
        raise InvalidArgument("mapping is a JSON object (types, attributes, values, relationTypes)")
    unknown = set(found) - {"types", "attributes", "values", "relationTypes"}
    if unknown:
        raise InvalidArgument(
            f"mapping.{sorted(unknown)[0]} is not known; mapping takes types, attributes, "
            "values and relationTypes"
        )
    return found


def _read(data: bytes, limit: int) -> reqif_in.Document:
    return reqif_in.read(reqif_in.unpacked(data, limit))


async def _target(gw: Gateway) -> reqif_in.Target:
    """The configuration the document is mapped onto."""
    types = await gw.catalog.item_types()
    item_types = {
        int(k): (
            str(t["typeKey"]),
            str(t["display"]),
            str(t["category"]),
            {str(f["name"]): dict(f) for f in t["fields"]},
        )
        for k, t in types.items()
    }
    lists = {
        int(str(f["pickList"]))
        for _, _, _, fields in item_types.values()
        for f in fields.values()
        if f.get("pickList")
    }
    options: dict[int, dict[str, int]] = {}
    for pick_list in sorted(lists):
        options[pick_list] = {o.name.lower(): o.id async for o in _options(gw, pick_list)}
    relationship_types = await gw.upstreams.items.configuration.ListRelationshipTypes(
        core_pb2.Page(start_at=0, max_results=1000)
    )
    folder = next(
        (
            k
            for k, (key, _, category, _) in item_types.items()
            if key == "FLD" or category == "FOLDER"
        ),
        None,
    )
    return reqif_in.Target(
        {k: v for k, v in item_types.items() if v[2] not in NOT_ITEMS},
        options,
        {t.name.lower(): t.id for t in relationship_types.relationship_types},
        folder,
    )


def _options(gw: Gateway, pick_list: int) -> AsyncIterator[items_pb2.PickListOption]:
    return every_page(
        lambda page: gw.upstreams.items.configuration.ListPickListOptions(
            items_pb2.ListOptionsRequest(pick_list=pick_list, page=page)
        ),
        lambda reply: reply.options,
    )


async def _existing(gw: Gateway, project: int) -> reqif_in.Existing:
    """The project's items and relationships, as a re-import compares them."""
    found = reqif_in.Existing()
    listed = every_page(
        lambda page: gw.upstreams.items.items.ListItems(
            items_pb2.ListItemsRequest(project=project, page=page)
        ),
        lambda reply: reply.items,
        _PAGE,
    )
    async for item in listed:
        fields = orjson.loads(item.fields_json) if item.fields_json else {}
        parent = item.location.parent_item if item.location.HasField("parent_item") else None
        found.items.append(
            reqif_in.ExistingItem(
                item.id,
                item.item_type,
                parent,
                item.global_id,
                str(fields.get("name", "")),
                fields,
                item.location.sort_order,
            )
        )
    last = 0
    while True:
        page = await gw.upstreams.items.relationships.ListRelationships(
            items_pb2.ListRelationshipsRequest(
                project=project,
                last_id=last,
                omit_count=True,
                page=core_pb2.Page(start_at=0, max_results=_PAGE),
            )
        )
        found.relationships += [
            (r.id, r.from_item, r.to_item, r.relationship_type) for r in page.relationships
        ]
        if len(page.relationships) < _PAGE:
            return found
        last = page.relationships[-1].id
