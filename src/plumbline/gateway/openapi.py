"""The OpenAPI description of every route that exists, per API version.

FastAPI generates the operations from the routes: query parameters from their
dependencies (``query.py``), request bodies from ``bodies.py``, success responses from
``schemas.py`` declarations. This module adds what applies to every operation (the
error responses, security), leaves out what FastAPI would claim but the API never does
(422 validation errors), writes the schemas in OpenAPI 3.0's dialect (Swagger UI 4, the
packaged docs UI, reads 3.0 only) and gives each version the operations it serves:
routes that depend on ``labs_version`` appear under ``/rest/labs`` only (``deps.serves``).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.dependencies.utils import get_flat_dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import WithJsonSchema
from starlette.requests import Request
from starlette.responses import Response

from plumbline.gateway import schemas
from plumbline.gateway.deps import DATE_HEADER_PARAMETER, Gw, Version, serves
from plumbline.gateway.envelope import json_response

router = APIRouter(tags=["meta"])

_PREFIX = "/rest/{version}"
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
# Schemas FastAPI adds for its 422 answers, which the API never gives.
_VALIDATION_SCHEMAS = ("HTTPValidationError", "ValidationError")


def labs_only(app: FastAPI) -> set[tuple[str, str]]:
    """(path, method) of every operation served under ``/rest/labs`` only."""
    return {
        (route.path, method.lower())
        for route in app.routes
        if isinstance(route, APIRoute) and not serves(route, "v1")
        for method in route.methods
    }


def _word(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name))


def operation_id(route: APIRoute) -> str:
    """A route's operationId: its method and path in camelCase, stable while they are.

    ``GET /rest/{version}/items/{id}/versions/{versionNum}`` is
    ``getItemsVersionsByVersionNum``: the path's names in order, leaving out ``rest``
    where a name follows it (``/rest`` itself is ``getRest``) and the path parameters
    but the last one, which is ``By`` and its name. Ids are unique per document
    (``tests/unit/gateway/test_openapi.py``).
    """
    segments = route.path_format.strip("/").split("/")
    names = [s for s in segments if not s.startswith("{")]
    if names[:1] == ["rest"] and len(names) > 1:
        segments.remove("rest")
    words = [
        _word(s) if not s.startswith("{") else "By" + _word(s[1:-1])
        for i, s in enumerate(segments)
        if not s.startswith("{") or i == len(segments) - 1
    ]
    return min(route.methods).lower() + "".join(words)


def _errors(path: str, operation: dict[str, Any]) -> list[int]:
    """The error statuses an operation can answer."""
    if not path.startswith("/rest"):
        return []
    # The throttle is in front of every API route, and so is the URL length limit
    # (``httpproto.MAX_URL``).
    statuses = [414, 429]
    if path != "/rest":
        statuses.append(503)  # it calls a service
    if path.startswith(_PREFIX):
        takes_input = "requestBody" in operation or any(
            p.get("name") != "version" for p in operation.get("parameters", [])
        )
        statuses += [400, 404] if takes_input else []
        statuses += [401, 405]
    return statuses


def _openapi30(node: Any) -> Any:
    """A JSON schema (pydantic writes 2020-12) in the OpenAPI 3.0 dialect."""
    if isinstance(node, list):
        return [_openapi30(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {
        key: {name: _openapi30(s) for name, s in value.items()}
        if key == "properties" and isinstance(value, dict)
        else _openapi30(value)
        for key, value in node.items()
    }
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list) and {"type": "null"} in options:
            rest = [o for o in options if o != {"type": "null"}]
            del node[key]
            if len(rest) == 1 and "$ref" in rest[0]:
                node["allOf"] = rest
            elif len(rest) == 1:
                node = {**rest[0], **node}
            else:
                node[key] = rest
            node["nullable"] = True
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if isinstance(node.get("examples"), list):
        examples = node.pop("examples")
        if examples:
            node["example"] = examples[0]
    for bound, strict in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if isinstance(node.get(strict), int | float) and not isinstance(node[strict], bool):
            node[bound] = node[strict]
            node[strict] = True
    return node


def _declared(app: FastAPI) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """(path, method, in, name) -> the schema declared for a query parameter (``query.py``).

    FastAPI writes the schema with the default of the dependency's raw value (None, then
    left out) instead of the one declared, so the declared schema is put back whole.
    """
    declared = {}
    for route in app.routes:
        if isinstance(route, APIRoute):
            flat = get_flat_dependant(route.dependant)
            for field in flat.query_params:
                for meta in field.field_info.metadata:
                    if isinstance(meta, WithJsonSchema) and meta.json_schema is not None:
                        for method in route.methods:
                            key = (route.path, method.lower(), "query", field.alias)
                            declared[key] = meta.json_schema
    return declared


def _dated(app: FastAPI) -> set[tuple[str, str]]:
    """(path, method) of the routes whose view answers records the date header changes."""
    dated: set[tuple[str, str]] = set()
    for route in app.routes:
        if isinstance(route, APIRoute):
            pending = [route.dependant]
            while pending:
                dependant = pending.pop()
                if getattr(dependant.call, "date_header", False):
                    dated.update((route.path, method.lower()) for method in route.methods)
                    break
                pending.extend(dependant.dependencies)
    return dated


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in document.get("paths", {}).items()
        for method, operation in item.items()
        if method in _METHODS
    ]


def _generate(app: FastAPI) -> dict[str, Any]:
    document = get_openapi(
        title="Plumbline REST API",
        version="1",
        openapi_version="3.0.3",
        description="Requirements and test management. Every list takes startAt and "
        "maxResults (default 20, at most 50); include= returns referenced records in linked. "
        "Errors answer {meta: {status, timestamp, message}}.",
        routes=app.routes,
    )
    record_schemas, error_responses = schemas.components()
    components = document.setdefault("components", {})
    known = components.setdefault("schemas", {})
    for name in _VALIDATION_SCHEMAS:
        known.pop(name, None)
    for name, schema in record_schemas.items():
        if name in known and known[name] != schema:
            raise ValueError(f"a request and a response schema are both named {name}")
        known[name] = schema
    components["responses"] = error_responses
    declared = _declared(app)
    dated = _dated(app)
    for path, method, operation in _operations(document):
        if (path, method) in dated:
            operation.setdefault("parameters", []).append(copy.deepcopy(DATE_HEADER_PARAMETER))
        for parameter in operation.get("parameters", []):
            schema = declared.get((path, method, parameter["in"], parameter["name"]))
            if schema is not None:
                parameter["schema"] = copy.deepcopy(schema)
        responses = operation.setdefault("responses", {})
        if "$ref" not in responses.get("422", {"$ref": ""}):
            responses.pop("422")  # FastAPI's validation answer, which the API never gives
        for status, response in responses.items():
            if "$ref" in response:  # FastAPI adds a description, which a reference may not have
                responses[status] = {"$ref": response["$ref"]}
        for status in _errors(path, operation):
            responses.setdefault(str(status), schemas.errors(status)[status])
    components["securitySchemes"] = {
        "basic": {"type": "http", "scheme": "basic"},
        "bearer": {"type": "http", "scheme": "bearer", "description": "POST /rest/oauth/token"},
    }
    document["security"] = [{"basic": []}, {"bearer": []}]
    converted: dict[str, Any] = _openapi30(document)
    return converted


def describe(app: FastAPI, version: str, base: str) -> dict[str, Any]:
    """The document for one version: its own operations at concrete paths."""
    cached = app.state.__dict__.get("openapi_base")
    if cached is None:
        cached = (_generate(app), labs_only(app))
        app.state.openapi_base = cached
    generated, labs = cached
    document = copy.deepcopy(generated)
    paths: dict[str, Any] = {}
    for path, item in document.get("paths", {}).items():
        if path.startswith(_PREFIX):
            operations = {
                method: operation
                for method, operation in item.items()
                if version == "labs" or (path, method) not in labs
            }
            if not operations:
                continue
            for operation in operations.values():
                operation["parameters"] = [
                    p for p in operation.get("parameters", []) if p.get("name") != "version"
                ]
                if not operation["parameters"]:
                    del operation["parameters"]
            paths[f"/rest/{version}" + path[len(_PREFIX) :]] = operations
        elif path.startswith("/rest"):
            paths[path] = item
    document["paths"] = paths
    document["servers"] = [{"url": base}]
    return document


@router.get(
    "/rest/{version}/api-docs",
    summary="The OpenAPI description of this version",
    responses={
        200: {
            "description": "An OpenAPI 3.0 document.",
            "content": {schemas.JSON: {"schema": {"type": "object"}}},
        }
    },
)
async def api_docs(request: Request, version: Version, gw: Gw) -> Response:
    # Without a configured public URL the server is "/", relative to wherever the reader
    # loaded the document from: the docs page's "Try it out" then calls the origin the
    # browser is on, whatever host name reached the gateway (the front door does not
    # trust an unlisted Host header for absolute URLs).
    public = gw.settings.public_url
    return json_response(describe(request.app, version, public.rstrip("/") if public else "/"))
