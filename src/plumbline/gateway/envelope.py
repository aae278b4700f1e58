"""The response envelope: ``meta``, ``links``, ``data``, ``linked``."""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any, NotRequired
from urllib.parse import quote

import orjson
from starlette.responses import Response
from typing_extensions import TypedDict

from plumbline.common.dates import format_datetime, utcnow

JSON = "application/json"

# The bodies below are the description's response types too (``gateway/schemas.py``);
# pydantic reads these classes, mypy checks that the builders follow them.


class Meta(TypedDict):
    """``meta`` of a response."""

    status: str
    timestamp: str


class PageInfo(TypedDict):
    """Where a page lies in the whole list."""

    startIndex: int
    resultCount: int
    totalResults: int


class PageMeta(Meta):
    """``meta`` of a list."""

    pageInfo: PageInfo


class LinkTemplate(TypedDict):
    """Where the record a reference field names can be read."""

    type: str
    href: str


class DataWrapper(TypedDict):
    """One record (``data``) with its links and, for ``include``, the linked records."""

    meta: Meta
    links: dict[str, LinkTemplate]
    data: Any
    linked: NotRequired[dict[str, dict[str, Any]]]


class DataListWrapper(TypedDict):
    """A page of records."""

    meta: PageMeta
    links: dict[str, LinkTemplate]
    data: list[Any]
    linked: NotRequired[dict[str, dict[str, Any]]]


class TotalsMeta(PageMeta):
    """``meta`` of a page of a set that is also counted whole (labs: ``/coverage``)."""

    #: How many of the whole set fall in each class (``all``: the whole set).
    totals: dict[str, int]
    #: The moment answered, for a set as it was (``asOf``, ``baseline``).
    asOf: NotRequired[str]


class TotalsListWrapper(TypedDict):
    """A page of records, and totals over every page."""

    meta: TotalsMeta
    links: dict[str, LinkTemplate]
    data: list[Any]


class AsOfMeta(PageMeta):
    """``meta`` of a page of a set as it was (labs: ``/trace`` with ``asOf`` or
    ``baseline``, ``/items/{id}/impact`` with ``asOf`` or ``version``)."""

    #: The moment answered (a baseline's: when it was taken); absent: as it is now.
    asOf: NotRequired[str]


class AsOfListWrapper(TypedDict):
    """A page of records, as they were at ``meta.asOf`` when it is there."""

    meta: AsOfMeta
    links: dict[str, LinkTemplate]
    data: list[Any]


class CursorMeta(Meta):
    """``meta`` of a feed read by cursor: where to read on from."""

    #: The cursor to pass as ``after`` next: the last change's, or, where none came,
    #: as far as the feed was read.
    next: int


class CursorListWrapper(TypedDict):
    """Changes after a cursor (labs: ``/events``)."""

    meta: CursorMeta
    data: list[Any]


class CreatedMeta(Meta):
    """``meta`` of a 201: the new record's id and URL."""

    location: str
    id: int


class CreatedResponse(TypedDict):
    """What a POST answers."""

    meta: CreatedMeta
    data: NotRequired[Any]


class AcceptedMeta(Meta):
    """``meta`` of a 202: where to follow the work that was started."""

    location: str


class AcceptedResponse(TypedDict):
    """What a POST that starts work answers: the work, and where to follow it."""

    meta: AcceptedMeta
    data: Any


class UpdatedResponse(TypedDict):
    """What PUT and PATCH answer (``data`` for the few that report)."""

    meta: Meta
    data: NotRequired[Any]


class ErrorMeta(Meta):
    """``meta`` of an error: the reason phrase as ``status``, a sentence as ``message``."""

    message: str


class ErrorResponse(TypedDict):
    """Every error."""

    meta: ErrorMeta


class BadLine(TypedDict):
    """A line of a refused file, and what is wrong with it."""

    line: int
    message: str


class BadLinesResponse(ErrorResponse):
    """A refused file (a bulk import): the error, and its first bad lines."""

    errors: list[BadLine]


class Unmapped(TypedDict):
    """Something of a ReqIF document the project's configuration cannot take."""

    message: str


class Suggested(TypedDict):
    """What would let a refused ReqIF import through: a configuration to apply
    (``plumbline config apply``) and the mapping to send with the file."""

    configuration: dict[str, Any]
    mapping: dict[str, Any]


class UnmappedResponse(ErrorResponse):
    """A ReqIF import refused before anything was written. When the document cannot be
    mapped: each reason in ``errors`` and what would let it through in ``suggested``
    (absent for other refusals: a file that is not ReqIF, a bad mapping)."""

    errors: NotRequired[list[Unmapped]]
    suggested: NotRequired[Suggested]


def unmapped(message: str, errors: list[str], suggested: Suggested) -> Response:
    """400 for a ReqIF document the project cannot take: each reason, and a suggestion."""
    body: UnmappedResponse = {
        "meta": {"status": reason_phrase(400), "timestamp": _now(), "message": message},
        "errors": [{"message": e} for e in errors],
        "suggested": suggested,
    }
    return json_response(body, status=400)


def _now() -> str:
    return format_datetime(utcnow())


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON response (orjson, no escaping of non-ASCII)."""
    return Response(orjson.dumps(body), status_code=status, media_type=JSON, headers=headers)


def ok(
    data: Any,
    links: Mapping[str, LinkTemplate] | None = None,
    linked: dict[str, Any] | None = None,
    page: tuple[int, int, int] | None = None,
) -> Response:
    """200 with a record or a page of records; ``page`` is (start, count, total)."""
    templates = dict(links or {})
    body: DataWrapper | DataListWrapper
    if page is None:
        body = {"meta": {"status": "OK", "timestamp": _now()}, "links": templates, "data": data}
    else:
        info: PageInfo = {"startIndex": page[0], "resultCount": page[1], "totalResults": page[2]}
        meta: PageMeta = {"status": "OK", "timestamp": _now(), "pageInfo": info}
        body = {"meta": meta, "links": templates, "data": data}
    if linked is not None:
        body["linked"] = linked
    return json_response(body)


def with_totals(
    data: Any, page: tuple[int, int, int], totals: dict[str, int], moment: str | None = None
) -> Response:
    """200 with a page of records, ``page`` (start, count, total), ``meta.totals`` and,
    for a set as it was, the moment in ``meta.asOf``."""
    info: PageInfo = {"startIndex": page[0], "resultCount": page[1], "totalResults": page[2]}
    meta: TotalsMeta = {"status": "OK", "timestamp": _now(), "pageInfo": info, "totals": totals}
    if moment is not None:
        meta["asOf"] = moment
    body: TotalsListWrapper = {"meta": meta, "links": {}, "data": data}
    return json_response(body)


def as_of_page(data: Any, page: tuple[int, int, int], moment: str | None) -> Response:
    """200 with a page of records, ``page`` (start, count, total) and, for a set as it
    was, the moment in ``meta.asOf``."""
    info: PageInfo = {"startIndex": page[0], "resultCount": page[1], "totalResults": page[2]}
    meta: AsOfMeta = {"status": "OK", "timestamp": _now(), "pageInfo": info}
    if moment is not None:
        meta["asOf"] = moment
    body: AsOfListWrapper = {"meta": meta, "links": {}, "data": data}
    return json_response(body)


def after_cursor(data: list[Any], next_cursor: int) -> Response:
    """200 with what came after a cursor and the cursor to read on from."""
    body: CursorListWrapper = {
        "meta": {"status": "OK", "timestamp": _now(), "next": next_cursor},
        "data": data,
    }
    return json_response(body)


def created(new_id: int, location: str, data: Any = None) -> Response:
    """201 with ``meta.id`` and ``meta.location`` (clients read either), ``data`` if given."""
    body: CreatedResponse = {
        "meta": {"status": "Created", "timestamp": _now(), "location": location, "id": new_id}
    }
    if data is not None:
        body["data"] = data
    return json_response(body, status=201, headers={"Location": location})


def accepted(location: str, data: Any) -> Response:
    """202 with where to follow the work started (``meta.location``, ``Location``)."""
    body: AcceptedResponse = {
        "meta": {"status": "Accepted", "timestamp": _now(), "location": location},
        "data": data,
    }
    return json_response(body, status=202, headers={"Location": location})


def updated(data: Any = None) -> Response:
    """200 ``meta.status`` OK: what PUT and PATCH answer (``data`` for the few that report)."""
    body: UpdatedResponse = {"meta": {"status": "OK", "timestamp": _now()}}
    if data is not None:
        body["data"] = data
    return json_response(body)


def attachment_disposition(name: str) -> str:
    """``Content-Disposition: attachment`` with the name for every client: an ASCII
    fallback and the exact name in UTF-8 (RFC 6266)."""
    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\/' else "_" for c in name)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def deleted() -> Response:
    """204 with no body."""
    return Response(status_code=204)


#: Reason phrases as clients of the contract know them, whatever Python's ``http`` says:
#: Python 3.13 renamed these after RFC 9110 ("Content Too Large", ...).
_PHRASES = {
    413: "Request Entity Too Large",
    414: "Request-URI Too Long",
    416: "Requested Range Not Satisfiable",
    422: "Unprocessable Entity",
}


def reason_phrase(status: int) -> str:
    """``meta.status`` of an error: the same on every supported Python."""
    return _PHRASES.get(status) or HTTPStatus(status).phrase


def bad_lines(message: str, lines: list[BadLine]) -> Response:
    """400 for a refused file: ``message`` and the bad lines in ``errors``."""
    body: BadLinesResponse = {
        "meta": {"status": reason_phrase(400), "timestamp": _now(), "message": message},
        "errors": lines,
    }
    return json_response(body, status=400)


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """An error body: the reason phrase as ``status`` and a sentence as ``message``."""
    phrase = reason_phrase(status)
    body: ErrorResponse = {"meta": {"status": phrase, "timestamp": _now(), "message": message}}
    return json_response(body, status=status, headers=headers)
