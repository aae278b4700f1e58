"""The OpenAPI description of every route that exists, per API version."""

from __future__ import annotations

import copy
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.requests import Request
from starlette.responses import Response

from plumbline.gateway.deps import Caller, Gw, Version
from plumbline.gateway.envelope import json_response
from plumbline.gateway.includes import base_url

router = APIRouter(tags=["meta"])

_PREFIX = "/rest/{version}"


def describe(app: FastAPI, version: str, base: str) -> dict[str, Any]:
    """The document for one version: concrete paths, Basic and Bearer security."""
    cached = app.state.__dict__.setdefault("openapi_base", None)
    if cached is None:
        cached = get_openapi(
            title="Plumbline REST API",
            version="1",
            # Swagger UI 4 (the packaged docs UI) renders 3.0 documents only.
            openapi_version="3.0.3",
            description="Requirements and test management. Every list takes startAt and "
            "maxResults (default 20, at most 50); include= returns referenced records in linked.",
            routes=app.routes,
        )
        app.state.openapi_base = cached
    document = copy.deepcopy(cached)
    paths: dict[str, Any] = {}
    for path, operations in document.get("paths", {}).items():
        if path.startswith(_PREFIX):
            if "/apicredentials" in path and version != "labs":
                continue
            concrete = f"/rest/{version}" + path[len(_PREFIX) :]
            for operation in operations.values():
                operation["parameters"] = [
                    p for p in operation.get("parameters", []) if p.get("name") != "version"
                ]
            paths[concrete] = operations
        elif path.startswith("/rest"):
            paths[path] = operations
    document["paths"] = paths
    document["servers"] = [{"url": base}]
    components = document.setdefault("components", {})
    components["securitySchemes"] = {
        "basic": {"type": "http", "scheme": "basic"},
        "bearer": {"type": "http", "scheme": "bearer", "description": "POST /rest/oauth/token"},
    }
    document["security"] = [{"basic": []}, {"bearer": []}]
    return document


@router.get("/rest/{version}/api-docs", summary="The OpenAPI description of this version")
async def api_docs(request: Request, version: Version, gw: Gw, _c: Caller) -> Response:
    base = base_url(request, gw.settings.public_url)
    return json_response(describe(request.app, version, base))
