"""``POST /rest/labs/projects/{id}/import``: a project's items and relationships from a
JSON Lines file, all at once (docs/import.md).

The file is the request body; it goes on to the items service in chunks over a
client-streamed call, which checks it line by line as it arrives and writes it in one
transaction once every line passed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plumbline.api.items.v1 import items_pb2
from plumbline.common import int64
from plumbline.common.errors import InvalidArgument
from plumbline.gateway import records, schemas
from plumbline.gateway.deps import Gateway, Gw
from plumbline.gateway.envelope import BadLine, bad_lines, updated
from plumbline.gateway.uploads import Pace, limited, refuse_declared, send_stream

router = APIRouter(prefix="/rest/{version}", tags=["projects"])

CHUNK = 256 * 1024

_REF: dict[str, object] = {
    "description": "The key of an item line of the file, or the id of an existing item.",
    "oneOf": [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 1}],
}
#: The body, one JSON object a line: described as the array of its lines.
_LINES = {
    "type": "array",
    "description": "JSON Lines, one object a line (shown as the array of its lines): items, "
    "then versions, then relationships, then deletions.",
    "items": {
        "oneOf": [
            {
                "title": "ImportItemLine",
                "type": "object",
                "required": ["itemType"],
                "additionalProperties": False,
                "properties": {
                    "key": {"type": "string", "minLength": 1, "maxLength": 255},
                    "itemType": {
                        "description": "An item type's id or key.",
                        "oneOf": [{"type": "integer"}, {"type": "string"}],
                    },
                    "childItemType": {"type": "integer"},
                    "parent": {
                        **_REF,
                        "description": "An earlier item line's key, or the id "
                        "of an item of the project; none: the project's root.",
                    },
                    "globalId": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 128,
                        "description": "The item's global id (default GID-<typeKey>-<id>).",
                    },
                    "fields": {"type": "object"},
                },
            },
            {
                "title": "ImportVersionLine",
                "type": "object",
                "required": ["item", "fields"],
                "additionalProperties": False,
                "properties": {
                    "item": {
                        **_REF,
                        "description": "An earlier item line's key, or the id of an item "
                        "of the project.",
                    },
                    "fields": {
                        "type": "object",
                        "description": "The item's fields at its next version, as PUT "
                        "/items/{id} takes them.",
                    },
                    "parent": {
                        "description": "Moves the item to the bottom of this parent in "
                        "the same version: an item line's key, an item's id, or null for "
                        "the project's root.",
                        "oneOf": [
                            {"type": "string", "minLength": 1},
                            {"type": "integer", "minimum": 1},
                            {"type": "null"},
                        ],
                    },
                },
            },
            {
                "title": "ImportRelationshipLine",
                "type": "object",
                "required": ["fromItem", "toItem"],
                "additionalProperties": False,
                "properties": {
                    "fromItem": _REF,
                    "toItem": _REF,
                    "relationshipType": {"type": "integer"},
                },
            },
            {
                "title": "ImportDeletionLine",
                "type": "object",
                "description": "Last: an item of the project (with what is under it) or "
                "a relationship of the project to delete.",
                "minProperties": 1,
                "maxProperties": 1,
                "additionalProperties": False,
                "properties": {
                    "deleteItem": {"type": "integer", "minimum": 1},
                    "deleteRelationship": {"type": "integer", "minimum": 1},
                },
            },
        ]
    },
}


WHAT = "An import"


async def bulk_import(
    gw: Gateway, project: int, body: AsyncIterator[bytes]
) -> items_pb2.ImportReply:
    """``body`` (JSON Lines) through the items service's bulk import; its answer."""

    async def chunks() -> AsyncIterator[items_pb2.ImportChunk]:
        yield items_pb2.ImportChunk(project=project)
        async for data in body:
            yield items_pb2.ImportChunk(data=data)

    return await send_stream(
        gw.upstreams.items.projects.ImportItems,
        chunks(),
        idle=gw.settings.body_timeout,
        answer_within=gw.settings.import_timeout,
        service="items",
    )


@router.post(
    "/projects/{projectId}/import",
    summary="Import items and relationships into a project from JSON Lines",
    description=(
        "The body is a JSON Lines file (one JSON object a line, any content type; "
        'application/x-ndjson is usual). An item line: {"key": "F1", "itemType": 24 '
        'or "REQ", "childItemType": 25, "parent": "F0" or 1234, "globalId": "...", "fields": '
        '{"name": ...}}, where parent is the key of an earlier item line or the id of an '
        "item of the project (none: the project's root) and fields are those of POST "
        '/items. A version line, after the items: {"item": "F1" or 1234, "fields": '
        "{...}}, the item's next version as PUT /items/{id} would write it (a migration's "
        'history). A relationship line, after those: {"fromItem": "R1" or 1234, '
        '"toItem": ..., "relationshipType": 2}, its ends keys of item lines or ids of '
        'existing items. A deletion line, last: {"deleteItem": 1234} (with what is under '
        'it, as DELETE /items/{id}) or {"deleteRelationship": 56}, of the project. A '
        'version line with "parent" (a key, an id, or null for the root) also moves the '
        "item there in the same version. "
        "Items are created as POST /items would create them one by one in "
        "file order (each at the bottom of its parent, with their versions and "
        "activities); the item on the k-th item line (from 0) gets id firstItemId + k. "
        "An import is one transaction: it is written whole or not at all. Every line is "
        "checked before anything is written; a refused import answers 400 with the first "
        "100 bad lines, by line number, in errors. READ_WRITE on the project is needed. "
        "The file streams as an upload does, under PLUMBLINE_MAX_IMPORT_BYTES (413) and "
        "the transfer limits (no API slot; 408 below the minimum rate, 429 past the "
        "uploads a user may send at once); the project's other writes wait while the "
        "import is written."
    ),
    responses={
        **schemas.updated(records.ImportAnswer),
        **schemas.bad_lines("Some lines are bad; nothing was imported. errors names them."),
        **schemas.errors(408, 413),
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/x-ndjson": {"schema": _LINES}},
        }
    },
)
async def import_items(request: Request, projectId: int, gw: Gw) -> Response:
    if not 0 < projectId <= int64.MAX:
        raise InvalidArgument(f"projectId is out of range: 1 to {int64.MAX}, got {projectId}.")
    limit = gw.settings.max_import_bytes
    refuse_declared(request, limit, WHAT)
    body = limited(Pace.of(gw.settings).reader(request.stream()), limit, WHAT, CHUNK)
    reply = await bulk_import(gw, projectId, body)
    if reply.bad_count:
        told: list[BadLine] = [{"line": b.line, "message": b.message} for b in reply.bad]
        more = f" The first {len(told)} are in errors." if reply.bad_count > len(told) else ""
        lines = "; ".join(f"line {b['line']}: {b['message']}" for b in told[:3])
        return bad_lines(
            f"{reply.bad_count} line{'s' if reply.bad_count != 1 else ''} of the import "
            f"{'are' if reply.bad_count != 1 else 'is'} bad; nothing was imported. "
            f"{lines}{' ...' if reply.bad_count > 3 else ''}{more}",
            told,
        )
    answer: records.ImportAnswer = {
        "project": projectId,
        "lines": reply.lines,
        "items": reply.items,
        "relationships": reply.relationships,
        "versions": reply.versions,
        "firstItemId": reply.first_item_id,
        "deleted": reply.deleted,
        "relationshipsDeleted": reply.relationships_deleted,
    }
    return updated(answer)
