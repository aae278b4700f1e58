"""Every failure becomes the contract's error body; nothing a client sends gives a 500."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match

from plumbline.common import int64
from plumbline.common.errors import PlumblineError, Throttled
from plumbline.gateway.auth import challenge
from plumbline.gateway.envelope import error

log = logging.getLogger(__name__)


def _where(loc: tuple[Any, ...]) -> str:
    # The first element says where the value came from (body, query, path).
    parts = (
        [str(p) for p in loc[1:]]
        if loc and loc[0] in ("body", "query", "path")
        else list(map(str, loc))
    )
    return ".".join(parts) or "the request body"


def describe_validation(
    errors: list[dict[str, Any]], allowed: dict[str, list[str]] | None = None
) -> str:
    """One sentence per problem, joined."""
    sentences = []
    for problem in errors[:10]:
        kind = problem.get("type", "")
        where = _where(tuple(problem.get("loc", ())))
        ctx = problem.get("ctx") or {}
        if kind == "json_invalid":
            sentences.append(
                f"The request body is not valid JSON ({ctx.get('error', 'parse error')})."
            )
        elif kind == "missing" and tuple(problem.get("loc", ()))[:1] == ("query",):
            # The words params.integer used before FastAPI checked presence.
            sentences.append(f"the query parameter {where} is required")
        elif kind == "missing":
            if where == "the request body":
                sentences.append("The request needs a JSON body.")
            else:
                sentences.append(f"{where} is required.")
        elif kind == "extra_forbidden":
            sentences.append(f"{where} is not a known field.")
        elif kind == "string_too_long":
            sentences.append(f"{where} must be at most {ctx.get('max_length')} characters.")
        elif kind == "string_too_short":
            sentences.append(f"{where} must not be empty.")
        elif kind == "model_attributes_type" or kind == "dict_type":
            sentences.append(f"{where} must be a JSON object.")
        else:
            sentences.append(f"{where}: {problem.get('msg', 'invalid value')}.")
    return " ".join(sentences)


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route offers on this path (Starlette names only the first)."""
    methods: set[str] = set()
    for route in request.app.routes:
        match, _ = route.matches(dict(request.scope, method="__none__"))
        if match != Match.NONE:
            methods.update(getattr(route, "methods", None) or ())
    methods.discard("HEAD")
    return sorted(methods)


def install(app: FastAPI) -> None:
    """Registers the handlers."""

    @app.exception_handler(PlumblineError)
    async def domain(request: Request, exc: PlumblineError) -> Response:
        headers = None
        if exc.http_status == 429:
            retry_after = exc.retry_after if isinstance(exc, Throttled) else 1
            headers = {"Retry-After": str(retry_after)}
        if exc.http_status == 401:
            headers = challenge(request)
        if exc.http_status >= 500:
            log.warning("answering %s: %s", exc.http_status, exc.message)
        return error(exc.http_status, exc.message, headers)

    @app.exception_handler(RequestValidationError)
    async def validation(_request: Request, exc: RequestValidationError) -> Response:
        return error(400, describe_validation(list(exc.errors())))

    @app.exception_handler(HTTPException)
    async def http(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            return error(404, f"Nothing exists at {request.url.path}.")
        if exc.status_code == 405:
            allowed = ", ".join(_allowed_methods(request))
            message = f"{request.method} is not allowed on {request.url.path}"
            message += f"; allowed: {allowed}." if allowed else "."
            return error(405, message, {"Allow": allowed} if allowed else None)
        return error(exc.status_code, str(exc.detail), dict(exc.headers or {}) or None)

    @app.exception_handler(ValueError)
    async def value(_request: Request, exc: ValueError) -> Response:
        if "out of range" in str(exc).lower():
            # Protobuf refuses a number that does not fit the 64-bit field it is sent in.
            return error(
                400,
                "A number in the request is out of range: integers must be between "
                f"{int64.MIN} and {int64.MAX}.",
            )
        log.exception("unhandled error")
        return error(500, "The server could not complete the request.")

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, exc: Exception) -> Response:
        log.exception("unhandled error")
        return error(500, "The server could not complete the request.")
