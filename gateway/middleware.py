"""One ASGI layer in front of the routes: request ids, logs, metrics, throttling,
credentials (before routing, so unknown paths answer 401 too), the body size limit,
trailing slashes and the JSON content-type rule."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

from prometheus_client import Counter, Gauge, Histogram
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plumbline.common import telemetry
from plumbline.common.context import request_id_var
from plumbline.common.errors import PlumblineError
from plumbline.gateway import cors
from plumbline.gateway.auth import challenge
from plumbline.gateway.envelope import error

log = logging.getLogger("plumbline.gateway.access")

REQUESTS = Counter("plumbline_http_requests_total", "HTTP requests", ["method", "status"])
SECONDS = Histogram(
    "plumbline_http_request_seconds",
    "HTTP request time",
    ["method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
IN_FLIGHT = Gauge("plumbline_http_in_flight", "API requests being handled")
QUEUED = Gauge("plumbline_http_queued", "API requests waiting for a slot")
THROTTLED = Counter("plumbline_http_throttled_total", "API requests answered 429")

# Bodies that are not JSON by contract.
_NON_JSON_SUFFIXES = ("/file",)
_NON_JSON_PATHS = ("/rest/oauth/token", "/api-docs/login")
_PUBLIC_PATHS = ("/rest/oauth/token",)


class Throttle:
    """At most ``concurrency`` API requests at once, ``queue`` more waiting."""

    def __init__(self, concurrency: int, queue: int, timeout: float) -> None:
        self.slots = asyncio.Semaphore(concurrency)
        self.queue = queue
        self.timeout = timeout
        self.waiting = 0

    async def acquire(self) -> bool:
        """True once a slot is held; False when the queue is full or the wait timed out."""
        if not self.slots.locked():
            await self.slots.acquire()
            return True
        if self.waiting >= self.queue:
            return False
        self.waiting += 1
        QUEUED.inc()
        try:
            await asyncio.wait_for(self.slots.acquire(), self.timeout)
            return True
        except TimeoutError:
            return False
        finally:
            self.waiting -= 1
            QUEUED.dec()

    def release(self) -> None:
        """Frees a slot."""
        self.slots.release()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _has_body(scope: Scope) -> bool:
    length = _header(scope, b"content-length")
    if length is not None:
        return length.strip() not in ("", "0")
    return _header(scope, b"transfer-encoding") is not None


def needs_credentials(path: str) -> bool:
    """Whether ``path`` needs credentials: any ``/rest/{version}/...``, known or not."""
    return path.startswith("/rest/") and path not in _PUBLIC_PATHS


async def _authenticate(scope: Scope, path: str) -> Response | None:
    """The 401 for a request without valid credentials, before routing decides anything.

    The principal is kept in the request state, so the routes' ``Caller`` does not verify
    the credentials a second time.
    """
    gateway = getattr(scope["app"].state, "gateway", None) if "app" in scope else None
    if gateway is None or not needs_credentials(path):
        return None
    request = Request(scope)
    try:
        request.state.principal = await gateway.auth.authenticate(request)
    except PlumblineError as exc:
        headers = challenge(request) if exc.http_status == 401 else None
        return error(exc.http_status, exc.message, headers)
    return None


class GatewayMiddleware:
    """Wraps the whole HTTP app."""

    def __init__(self, app: ASGIApp, throttle: Throttle, max_body: int) -> None:
        self.app = app
        self.throttle = throttle
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if len(path) > 1 and path.endswith("/") and path != "/api-docs/":
            path = path.rstrip("/") or "/"
            scope = dict(scope, path=path, raw_path=path.encode())
        request_id = _header(scope, b"x-request-id") or uuid.uuid4().hex[:16]
        token = request_id_var.set(request_id)
        method: str = scope["method"]
        started = time.perf_counter()
        status_holder: list[int] = [500]

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder[0] = message["status"]
                headers = list(message.get("headers", ()))
                headers.append((b"x-request-id", request_id.encode()))
                message = dict(message, headers=headers)
            await send(message)

        api = path.startswith("/rest")
        try:
            if not api:
                await self.app(scope, receive, send_wrapper)
                return
            # Preflights need no credentials and take no slot; listed origins get CORS
            # headers on every answer, 401 and 429 included, so the page can read them.
            if await cors.answer_preflight(scope, send_wrapper):
                return
            send_api = cors.with_cors(scope, send_wrapper)
            if not await self.throttle.acquire():
                THROTTLED.inc()
                response = error(
                    429,
                    "Too many requests are waiting; retry after the time in Retry-After.",
                    {"Retry-After": "1"},
                )
                await response(scope, receive, send_api)
                return
            IN_FLIGHT.inc()
            try:
                if telemetry.enabled():
                    with telemetry.tracer().start_as_current_span(f"{method} {path}"):
                        await self._api(scope, receive, send_api)
                else:
                    await self._api(scope, receive, send_api)
            finally:
                IN_FLIGHT.dec()
                self.throttle.release()
        finally:
            elapsed = time.perf_counter() - started
            status = status_holder[0]
            REQUESTS.labels(method, str(status)).inc()
            SECONDS.labels(method).observe(elapsed)
            if path not in ("/healthz", "/readyz", "/metrics"):
                log.info(
                    "%s %s %d %.1fms",
                    method,
                    path,
                    status,
                    elapsed * 1000,
                )
            request_id_var.reset(token)

    async def _api(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Credentials first, then the body's size and content type, then the routes."""
        path: str = scope["path"]
        refused = await _authenticate(scope, path)
        if refused is None and _has_body(scope):
            length = _header(scope, b"content-length")
            if length is not None and length.strip().isdigit() and int(length) > self.max_body:
                refused = error(413, self._too_large(int(length)))
            elif scope["method"] in ("POST", "PUT", "PATCH"):
                problem = self._content_type_problem(scope, path)
                if problem is not None:
                    refused = error(400, problem)
        if refused is not None:
            await refused(scope, receive, send)
        else:
            await self.app(scope, self._bounded(receive), send)

    def _bounded(self, receive: Receive) -> Receive:
        """``receive`` that refuses a body (sent without a length) once it passes the limit."""
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    # Reading code (FastAPI's body parsing included) lets HTTPException
                    # through to the error handlers, which answer with the envelope.
                    raise HTTPException(413, self._too_large(None))
            return message

        return bounded

    def _too_large(self, length: int | None) -> str:
        limit = self.max_body
        shown = f"{limit} bytes" + (f" ({limit / 2**20:g} MiB)" if limit >= 2**20 else "")
        got = f"; this one has {length} bytes" if length is not None else ""
        return f"The request body must be at most {shown}{got}."

    @staticmethod
    def _content_type_problem(scope: Scope, path: str) -> str | None:
        if path in _NON_JSON_PATHS or path.endswith(_NON_JSON_SUFFIXES):
            return None
        content_type = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
        if content_type == "application/json" or content_type.endswith("+json"):
            return None
        shown = content_type or "none"
        return f"Request bodies must be JSON with Content-Type: application/json (got {shown})."
