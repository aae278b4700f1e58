"""The response envelope: ``meta``, ``links``, ``data``, ``linked``."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import orjson
from starlette.responses import Response

from plumbline.common.dates import format_datetime, utcnow

JSON = "application/json"


def _now() -> str:
    return format_datetime(utcnow())


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON response (orjson, no escaping of non-ASCII)."""
    return Response(orjson.dumps(body), status_code=status, media_type=JSON, headers=headers)


def ok(
    data: Any,
    links: dict[str, Any] | None = None,
    linked: dict[str, Any] | None = None,
    page: tuple[int, int, int] | None = None,
) -> Response:
    """200 with a record or a page of records; ``page`` is (start, count, total)."""
    meta: dict[str, Any] = {"status": "OK", "timestamp": _now()}
    if page is not None:
        meta["pageInfo"] = {"startIndex": page[0], "resultCount": page[1], "totalResults": page[2]}
    body: dict[str, Any] = {"meta": meta, "links": links or {}, "data": data}
    if linked is not None:
        body["linked"] = linked
    return json_response(body)


def created(new_id: int, location: str, extra: dict[str, Any] | None = None) -> Response:
    """201 with ``meta.id`` and ``meta.location`` (clients read either)."""
    body: dict[str, Any] = {
        "meta": {"status": "Created", "timestamp": _now(), "location": location, "id": new_id}
    }
    if extra:
        body.update(extra)
    return json_response(body, status=201, headers={"Location": location})


def updated(data: dict[str, Any] | None = None) -> Response:
    """200 ``meta.status`` OK: what PUT and PATCH answer (``data`` for the few that report)."""
    body: dict[str, Any] = {"meta": {"status": "OK", "timestamp": _now()}}
    if data is not None:
        body["data"] = data
    return json_response(body)


def deleted() -> Response:
    """204 with no body."""
    return Response(status_code=204)


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """An error body: the reason phrase as ``status`` and a sentence as ``message``."""
    phrase = HTTPStatus(status).phrase
    body = {"meta": {"status": phrase, "timestamp": _now(), "message": message}}
    return json_response(body, status=status, headers=headers)
