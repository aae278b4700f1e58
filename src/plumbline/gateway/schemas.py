"""What a route answers, for the OpenAPI description.

A route states its success response next to its path::

    @router.get("/tags/{id}", summary="Get a tag", responses=schemas.one(records.Tag))

``one`` and ``page`` wrap a record type in the envelope (``<Type>DataWrapper``,
``<Type>DataListWrapper``); ``created``, ``updated`` and ``deleted`` describe the bodies of
201, 200-after-a-write and 204. The record types are the TypedDicts the response builders
are annotated with (``records/``), and the envelopes those of ``envelope.py``: pydantic
generates every schema from them (``components``), so a schema cannot say something the
builders do not do without mypy noticing. ``ERRORS`` are the error responses; ``openapi.py``
adds the ones that apply to each operation.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from pydantic import TypeAdapter

from plumbline.gateway import envelope

Responses = dict[int | str, dict[str, Any]]

REF = "#/components/schemas/{model}"
JSON = "application/json"

#: status -> (component name, description); every error has the body ``ErrorResponse``.
ERRORS: dict[int, tuple[str, str]] = {
    400: (
        "BadRequest",
        "The request is malformed or a value is not allowed; the message says which.",
    ),
    401: ("Unauthorized", "Credentials are missing or wrong, or the caller may not do this."),
    404: ("NotFound", "Nothing exists at this address: an unknown id or API version."),
    405: (
        "MethodNotAllowed",
        "The service behind the operation does not offer it (during an upgrade, for one).",
    ),
    408: (
        "RequestTimeout",
        "The body stopped arriving, or came slower than the minimum rate; the message says "
        "the limit. The connection is closed.",
    ),
    413: (
        "PayloadTooLarge",
        "The body or file is larger than allowed; the message says the limit.",
    ),
    414: ("URITooLong", "The URL (path and query) is longer than the server takes."),
    416: ("RangeNotSatisfiable", "The byte range asked for lies outside the file."),
    422: (
        "UnprocessableEntity",
        "The Idempotency-Key was used before for a different request; the message says so.",
    ),
    429: (
        "TooManyRequests",
        "Too many requests are waiting, or too many transfers are open (the message says "
        "which); retry after Retry-After seconds.",
    ),
    503: ("ServiceUnavailable", "A service the request needs cannot be reached; retry later."),
}

_ENVELOPES: tuple[type[Any], ...] = (
    envelope.DataWrapper,
    envelope.DataListWrapper,
    envelope.CursorListWrapper,
    envelope.TotalsListWrapper,
    envelope.AsOfListWrapper,
    envelope.CreatedResponse,
    envelope.AcceptedResponse,
    envelope.UpdatedResponse,
    envelope.ErrorResponse,
    envelope.BadLinesResponse,
    envelope.UnmappedResponse,
)
# Record types by component name, and derived envelopes: name -> (envelope, record, list).
_RECORDS: dict[str, type[Any]] = {}
_DERIVED: dict[str, tuple[type[Any], str, bool]] = {}
# Envelopes whose data is a plain schema rather than a record: name -> (envelope, schema).
_INLINE: dict[str, tuple[type[Any], dict[str, Any]]] = {}


def ref(name: str) -> dict[str, str]:
    """A reference to a component schema."""
    return {"$ref": REF.format(model=name)}


def _record(shape: type[Any]) -> str:
    name = shape.__name__
    if _RECORDS.setdefault(name, shape) is not shape:
        raise ValueError(f"two response types are named {name}")
    return name


def _derived(base: type[Any], shape: type[Any], many: bool, suffix: str) -> dict[str, str]:
    name = _record(shape)
    _DERIVED[name + suffix] = (base, name, many)
    return ref(name + suffix)


def _json(status: int, description: str, schema: dict[str, Any]) -> Responses:
    return {status: {"description": description, "content": {JSON: {"schema": schema}}}}


def bad_lines(description: str) -> Responses:
    """400 naming the bad lines of a refused file (``envelope.bad_lines``)."""
    return _json(400, description, ref("BadLinesResponse"))


def unmapped(description: str) -> Responses:
    """400 listing what of a ReqIF document cannot be mapped (``envelope.unmapped``)."""
    return _json(400, description, ref("UnmappedResponse"))


def one(shape: type[Any], description: str = "The record.") -> Responses:
    """200 with one record of ``shape`` in ``data``."""
    schema = _derived(envelope.DataWrapper, shape, False, "DataWrapper")
    return _json(200, description, schema)


def page(shape: type[Any], description: str = "A page of records.") -> Responses:
    """200 with a page of ``shape`` records in ``data`` and ``meta.pageInfo``."""
    schema = _derived(envelope.DataListWrapper, shape, True, "DataListWrapper")
    return _json(200, description, schema)


def page_with_totals(shape: type[Any], description: str) -> Responses:
    """200 with a page of ``shape`` records, ``meta.pageInfo`` and ``meta.totals``."""
    schema = _derived(envelope.TotalsListWrapper, shape, True, "TotalsListWrapper")
    return _json(200, description, schema)


def page_as_of(shape: type[Any], description: str) -> Responses:
    """200 with a page of ``shape`` records and, for a set as it was, ``meta.asOf``."""
    schema = _derived(envelope.AsOfListWrapper, shape, True, "AsOfListWrapper")
    return _json(200, description, schema)


def after_cursor(shape: type[Any], description: str) -> Responses:
    """200 with ``shape`` records after a cursor and ``meta.next`` to read on from."""
    schema = _derived(envelope.CursorListWrapper, shape, True, "CursorListWrapper")
    return _json(200, description, schema)


def created(shape: type[Any] | None = None, description: str = "Created.") -> Responses:
    """201 with the new record's id and URL in ``meta`` (and ``data`` of ``shape``)."""
    if shape is None:
        return _json(201, description, ref("CreatedResponse"))
    return _json(201, description, _derived(envelope.CreatedResponse, shape, False, "Created"))


def accepted(shape: type[Any], description: str) -> Responses:
    """202 with the work started in ``data`` and where to follow it in ``meta``."""
    return _json(202, description, _derived(envelope.AcceptedResponse, shape, False, "Accepted"))


def updated(
    shape: type[Any] | None = None, description: str = "Done.", *, many: bool = False
) -> Responses:
    """200 after a PUT or PATCH (with ``data`` of ``shape``, or a list of them)."""
    if shape is None:
        return _json(200, description, ref("UpdatedResponse"))
    suffix = "UpdatedList" if many else "Updated"
    return _json(200, description, _derived(envelope.UpdatedResponse, shape, many, suffix))


def strings(name: str, description: str, *, after_write: bool = False) -> Responses:
    """200 with an array of strings in ``data`` (``after_write``: the body of a write)."""
    base = envelope.UpdatedResponse if after_write else envelope.DataWrapper
    _INLINE[name] = (base, {"type": "array", "items": {"type": "string"}})
    return _json(200, description, ref(name))


def deleted(description: str = "Deleted.") -> Responses:
    """204, no body."""
    return {204: {"description": description}}


def plain(shape: type[Any], description: str) -> Responses:
    """200 with a body of ``shape`` itself (no envelope)."""
    return _json(200, description, ref(_record(shape)))


def strings_body(max_items: int, description: str, member: str) -> dict[str, Any]:
    """``openapi_extra`` of a route that reads a list of strings itself: an object with the
    list in ``member``, or the bare JSON array."""
    strings = {
        "type": "array",
        "items": {"type": "string"},
        "maxItems": max_items,
        "description": description,
    }
    wrapped = {"type": "object", "required": [member], "properties": {member: strings}}
    schema = {"oneOf": [wrapped, strings]}
    return {"requestBody": {"required": True, "content": {JSON: {"schema": schema}}}}


def array_body(shape: type[Any], max_items: int | None = None) -> dict[str, Any]:
    """``openapi_extra`` of a route that reads its body itself: a JSON array of ``shape``."""
    schema: dict[str, Any] = {"type": "array", "items": ref(_record(shape))}
    if max_items is not None:
        schema.update(minItems=1, maxItems=max_items)
    return {"requestBody": {"required": True, "content": {JSON: {"schema": schema}}}}


def report_body() -> dict[str, Any]:
    """``openapi_extra`` of a route that reads an XML report itself, whole or as a form's
    ``file`` part."""
    xml = {"type": "string", "description": "The JUnit XML report."}
    form = {
        "type": "object",
        "required": ["file"],
        "properties": {"file": {"type": "string", "format": "binary"}},
    }
    content = {
        "application/xml": {"schema": xml},
        "text/xml": {"schema": xml},
        "multipart/form-data": {"schema": form},
    }
    return {"requestBody": {"required": True, "content": content}}


def form_body(shape: type[Any]) -> dict[str, Any]:
    """``openapi_extra`` of a route that reads a url-encoded form of ``shape`` itself."""
    content = {"application/x-www-form-urlencoded": {"schema": ref(_record(shape))}}
    return {"requestBody": {"required": True, "content": content}}


def inline(name: str, description: str, data: dict[str, Any]) -> Responses:
    """200 with ``data`` of the plain schema ``data`` (not a record type)."""
    _INLINE[name] = (envelope.DataWrapper, data)
    return _json(200, description, ref(name))


def errors(*statuses: int) -> Responses:
    """References to the shared error responses."""
    return {status: {"$ref": f"#/components/responses/{ERRORS[status][0]}"} for status in statuses}


@cache
def components() -> tuple[dict[str, Any], dict[str, Any]]:
    """The component schemas and the shared error responses, generated once."""
    adapters = [(t.__name__, TypeAdapter(t)) for t in (*_ENVELOPES, *_RECORDS.values())]
    _, definitions = TypeAdapter.json_schemas(
        [(name, "serialization", adapter) for name, adapter in adapters], ref_template=REF
    )
    schemas: dict[str, Any] = definitions.get("$defs", {})
    for name, (base, record, many) in _DERIVED.items():
        schema = copy.deepcopy(schemas[base.__name__])
        data = {"type": "array", "items": ref(record)} if many else ref(record)
        schema["properties"]["data"] = data
        schema["title"] = name
        schemas[name] = schema
    for name, (base, data_schema) in _INLINE.items():
        schema = copy.deepcopy(schemas[base.__name__])
        schema["properties"]["data"] = data_schema
        if "data" not in schema.setdefault("required", []):
            schema["required"].append("data")
        schema["title"] = name
        schemas[name] = schema
    responses = {
        name: {"description": description, "content": {JSON: {"schema": ref("ErrorResponse")}}}
        for name, description in ERRORS.values()
    }
    return schemas, responses
