"""One ASGI layer in front of the routes: request ids, logs, metrics, throttling,
credentials (before routing, so unknown paths answer 401 too), the body's size and time
limits (file uploads excepted: they stream), trusted Host names, trailing slashes and the
JSON content-type rule.

An API request passes, in order: an early 429 when admission would refuse it now (the
queue is as deep, or has stood as long, as it may: nothing else spent on it); credentials
(a 401 costs no slot and reads no body); the header checks (413, content type); its body,
read within ``body_timeout`` (else 408) before it takes a slot, so a stalled body holds
nothing but its connection; then a place under the adaptive limit (or 429).

A transfer (an attachment's file up or down, a JUnit report) takes no API slot: after its
credentials it takes a place in the transfer pool, and an upload one of its user's few
(429 when either is full); its body streams to the route under its own pace (408). A long
poll of the change feed takes no API slot either, but a place among the long polls
(``throttle.LongPolls``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from random import getrandbits
from urllib.parse import parse_qs

from prometheus_client import Counter, Gauge, Histogram
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plumbline.common import telemetry
from plumbline.common.capped import with_room
from plumbline.common.context import request_id_var
from plumbline.common.errors import PlumblineError, Throttled, size_text
from plumbline.gateway import cors
from plumbline.gateway.admission import Admission
from plumbline.gateway.auth import challenge
from plumbline.gateway.envelope import error
from plumbline.gateway.throttle import LongPolls, Transfers

log = logging.getLogger("plumbline.gateway.access")

REQUESTS = Counter("plumbline_http_requests_total", "HTTP requests", ["method", "status"])
SECONDS = Histogram(
    "plumbline_http_request_seconds",
    "HTTP request time",
    ["method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
IN_FLIGHT = Gauge("plumbline_http_in_flight", "API requests being handled")
THROTTLED = Counter("plumbline_http_throttled_total", "API requests answered 429")

# Bodies that are not JSON by contract.
_NON_JSON_SUFFIXES = ("/file", "/results", "/import", "/reqif")
_NON_JSON_PATHS = ("/rest/oauth/token", "/api-docs/login")
_PUBLIC_PATHS = ("/rest/oauth/token",)
# Bodies that flow on to a service as they arrive (files): the route reads them and holds
# them to their own limit (PLUMBLINE_MAX_UPLOAD_BYTES).
_STREAMED = re.compile(r"/rest/[^/]+/attachments/[^/]+/file")
# A JUnit report streams to its parser under its own limit (PLUMBLINE_MAX_REPORT_BYTES).
_REPORT = re.compile(r"/rest/[^/]+/testcycles/[^/]+/results")
# A bulk import streams to the items service under its own limit
# (PLUMBLINE_MAX_IMPORT_BYTES); a ReqIF import is read under the same.
_IMPORT = re.compile(r"/rest/[^/]+/projects/[^/]+/(?:import|reqif)")
# The change feed, which a ``wait`` above 0 makes a long poll.
_EVENTS = re.compile(r"/rest/[^/]+/events")
# Files going out: the attachment's file, a file by its URL, a ReqIF export.
_DOWNLOAD = re.compile(r"/rest/[^/]+/(?:attachments/[^/]+/file|files|projects/[^/]+/reqif)")
_UNLOGGED = ("/healthz", "/readyz", "/metrics")
# A client's X-Request-Id is kept only when it is this tame; otherwise one is generated.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\\]")
_CLOSE = {"Connection": "close"}
#: Where the server's root sends a browser: the interactive documentation.
DOCS_PAGE = "/api-docs/"
_MAX_TOLD = 100_000


def printable(text: str) -> str:
    """``text`` with control characters and backslashes escaped, for one-line logs."""
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


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
        if isinstance(exc, Throttled):
            headers = {"Retry-After": str(exc.retry_after)}
        return error(exc.http_status, exc.message, headers)
    return None


def trusted_host(scope: Scope, trusted: frozenset[str]) -> Scope:
    """``scope`` with a Host header that links may be built from: a Host that is neither
    in ``trusted`` (as ``host`` or ``host:port``) nor the address the connection reached
    is replaced by that address, so a client cannot choose the URLs others are given."""
    server = scope.get("server")
    if server is None:
        return scope
    ip, port = server[0], server[1]
    local = f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"
    host = (_header(scope, b"host") or "").strip().lower()
    name = host if host.endswith("]") else host.rsplit(":", 1)[0]
    if host == local or host in trusted or name in trusted or (port == 80 and host == ip):
        return scope
    headers = [(k, v) for k, v in scope.get("headers", ()) if k != b"host"]
    headers.append((b"host", local.encode()))
    return dict(scope, headers=headers)


def _connection(scope: Scope) -> tuple[str, int] | None:
    """The client's address and port: one connection. None behind a proxy (uvicorn sets
    the port of a forwarded client to 0), where many clients share the address."""
    client = scope.get("client")
    if not client or not client[1]:
        return None
    return (str(client[0]), int(client[1]))


def _replay(first: Message, receive: Receive) -> Receive:
    """``receive`` that answers ``first`` (the body, read already), then the connection's."""
    pending = [first]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay


class _ReaderStalled(Exception):
    """The client stopped taking a file's pieces."""


def transfer_of(scope: Scope) -> str | None:
    """``"upload"`` for a request whose body is a transfer (a file, a JUnit report, an
    import: it
    streams to the route), ``"download"`` for one whose answer is a file, else None."""
    method, path = scope["method"], scope["path"]
    if (method == "PUT" and _STREAMED.fullmatch(path)) or (
        method == "POST" and (_REPORT.fullmatch(path) or _IMPORT.fullmatch(path))
    ):
        return "upload"
    if method == "GET" and _DOWNLOAD.fullmatch(path):
        return "download"
    return None


def is_long_poll(scope: Scope) -> bool:
    """Whether a request is a long poll: a read of the change feed with a ``wait`` above
    0 (a ``wait`` that is no number is the route's to refuse, as an API request)."""
    if scope["method"] != "GET" or not _EVENTS.fullmatch(scope["path"]):
        return False
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    try:
        return any(float(value) > 0 for value in query.get("wait", ()))
    except ValueError:
        return False


def _user_of(scope: Scope) -> int | None:
    principal = scope.get("state", {}).get("principal")
    user = getattr(principal, "user_id", None)
    return user if isinstance(user, int) else None


def _without_body(send: Send) -> Send:
    """``send`` that drops the body of the response (a HEAD's answer)."""

    async def head(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = dict(message, body=b"")
        await send(message)

    return head


_NOSNIFF = (b"x-content-type-options", b"nosniff")


class GatewayMiddleware:
    """Wraps the whole HTTP app."""

    def __init__(
        self,
        app: ASGIApp,
        admission: Admission,
        max_body: int,
        body_timeout: float = 10.0,
        trusted_hosts: frozenset[str] = frozenset(),
        transfers: Transfers | None = None,
        long_polls: LongPolls | None = None,
    ) -> None:
        self.app = app
        self.admission = admission
        self.transfers = transfers or Transfers(256, 4)
        self.long_polls = long_polls or LongPolls()
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.trusted_hosts = trusted_hosts
        # Connections answered 429, and until when they were told to wait.
        self._told: dict[tuple[str, int], float] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if len(path) > 1 and path.endswith("/") and path != "/api-docs/":
            path = path.rstrip("/") or "/"
            scope = dict(scope, path=path, raw_path=path.encode())
        scope = trusted_host(scope, self.trusted_hosts)
        given = _header(scope, b"x-request-id")
        # A request id only tells log lines apart: random bits, not uuid4's urandom read
        # (9 µs against 1 on this machine's VM, on every request).
        request_id = given if given and _REQUEST_ID.fullmatch(given) else f"{getrandbits(64):016x}"
        token = request_id_var.set(request_id)
        method: str = scope["method"]
        if method == "HEAD":
            # HEAD wherever GET works: the GET's status and headers, no body.
            scope = dict(scope, method="GET")
            send = _without_body(send)
        started = time.perf_counter()
        # 499 (nginx's "client closed request") unless a response starts.
        status_holder: list[int] = [499]
        started_response = [False]

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder[0] = message["status"]
                started_response[0] = True
                headers = list(message.get("headers", ()))
                headers.append((b"x-request-id", request_id.encode()))
                # No browser may take an answer (JSON, a file) for another type than it says.
                if all(name.lower() != _NOSNIFF[0] for name, _ in headers):
                    headers.append(_NOSNIFF)
                message = dict(message, headers=headers)
            await send(message)

        try:
            if not path.startswith("/rest"):
                await self._other(scope, receive, send_wrapper)
            # Preflights need no credentials and take no slot; listed origins get CORS
            # headers on every answer, 401 and 429 included, so the page can read them.
            elif not await cors.answer_preflight(scope, send_wrapper):
                await self._api(scope, receive, cors.with_cors(scope, send_wrapper))
        except Exception:
            # An error no handler answered: the server answers 500 for it, and the log
            # says so (499 stays for a client that went away).
            if not started_response[0]:
                status_holder[0] = 500
            raise
        finally:
            elapsed = time.perf_counter() - started
            status = status_holder[0]
            REQUESTS.labels(method, str(status)).inc()
            SECONDS.labels(method).observe(elapsed)
            if path not in _UNLOGGED:
                log.info(
                    "%s %s %d %.1fms", printable(method), printable(path), status, elapsed * 1000
                )
            request_id_var.reset(token)

    async def _api(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Early refusal, credentials, header checks, the body, a slot, then the routes."""
        path: str = scope["path"]
        pending = _has_body(scope)
        held = await self._hold_if_told(scope)
        # Transfers and long polls take no API slot (see the module's docstring).
        beside = transfer_of(scope) or ("wait" if is_long_poll(scope) else None)
        if beside is None and self.admission.full():
            await self._throttled(scope, receive, send, pending)
            return
        refused = await _authenticate(scope, path)
        if beside is not None:
            await self._beside(scope, receive, send, beside, refused)
            return
        if refused is None and pending:
            refused = self._header_problem(scope, path)
        if refused is None and pending:
            body = await self._read_body(receive)
            if body is None:
                return
            if isinstance(body, Response):
                refused = body
            else:
                receive, pending = _replay(body, receive), False
                refused = self._untyped_problem(scope, path, body["body"])
        if refused is not None:
            await self._refuse(refused, scope, receive, send, pending)
            return
        if not await self.admission.acquire(waited=held):
            await self._throttled(scope, receive, send, False)
            return
        IN_FLIGHT.inc()
        started = time.perf_counter()
        # The service time is the handling's, up to the answer's first byte: how fast the
        # client takes the answer is the network's business.
        answered: list[float] = []

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start" and not answered:
                answered.append(time.perf_counter())
            await send(message)

        try:
            await self._route(scope, receive, timed)
        finally:
            IN_FLIGHT.dec()
            ended = answered[0] if answered else time.perf_counter()
            self.admission.release(ended - started)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        if telemetry.enabled():
            name = f"{scope['method']} {scope['path']}"
            with telemetry.tracer().start_as_current_span(name):
                await self.app(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _transfer(self, scope: Scope, receive: Receive, send: Send, upload: bool) -> None:
        """A transfer, in the transfer pool (and, an upload, in its user's few), never in
        an API slot: it lasts as long as the client and the network make it last."""
        user = _user_of(scope)
        problem = self.transfers.start(user, upload)
        if problem is not None:
            THROTTLED.inc()
            retry = str(self.admission.bounded(self.transfers.retry_after))
            response = error(429, problem, {"Retry-After": retry})
            await self._refuse(response, scope, receive, send, upload and _has_body(scope))
            return
        try:
            await self._route(scope, receive, send if upload else self._taken(send))
        except _ReaderStalled:
            log.info(
                "%s: the client took no part of the file for %gs",
                printable(scope["path"]),
                self.body_timeout,
            )
        finally:
            self.transfers.end(user, upload)

    async def _beside(
        self, scope: Scope, receive: Receive, send: Send, kind: str, refused: Response | None
    ) -> None:
        """A transfer or a long poll (``kind``: upload, download or wait), once its
        credentials are known (``refused``: the answer when they are not good)."""
        if refused is not None:
            await self._refuse(refused, scope, receive, send, _has_body(scope))
        elif kind == "wait":
            await self._long_poll(scope, receive, send)
        else:
            await self._transfer(scope, receive, send, kind == "upload")

    async def _long_poll(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A long poll, among the long polls, never in an API slot: it waits, not works."""
        user = _user_of(scope)
        problem = self.long_polls.start(user)
        if problem is not None:
            THROTTLED.inc()
            retry = str(self.admission.bounded(self.long_polls.retry_after))
            await self._refuse(
                error(429, problem, {"Retry-After": retry}), scope, receive, send, False
            )
            return
        try:
            await self._route(scope, receive, send)
        finally:
            self.long_polls.end(user)

    def _taken(self, send: Send) -> Send:
        """``send`` for a file going out: the client must take each piece within the
        body timeout, else the transfer ends (and its connection with it)."""

        async def paced(message: Message) -> None:
            try:
                async with asyncio.timeout(self.body_timeout):
                    await send(message)
            except TimeoutError:
                raise _ReaderStalled from None

        return paced

    async def _other(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Health, metrics and the documentation page: only the body's limits apply. The
        server's root sends a browser to the documentation."""
        if scope["path"] == "/" and scope["method"] == "GET":
            await RedirectResponse(DOCS_PAGE, status_code=302)(scope, receive, send)
            return
        if _has_body(scope):
            body = await self._read_body(receive)
            if body is None:
                return
            if isinstance(body, Response):
                await self._refuse(body, scope, receive, send, True)
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send)

    async def _read_body(self, receive: Receive) -> Message | Response | None:
        """The whole body as one message, the 413 or 408 that ends the request, or None
        when the client left before sending it (nothing to answer)."""
        chunks: list[bytes] = []
        seen = 0
        try:
            async with asyncio.timeout(self.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        return None
                    chunk: bytes = message.get("body", b"")
                    seen += len(chunk)
                    if seen > self.max_body:
                        return error(413, self._too_large(None))
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            return error(
                408,
                f"The request body did not arrive within {self.body_timeout:g} seconds "
                "of its headers; send it in one go.",
            )
        return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

    @staticmethod
    async def _refuse(
        response: Response, scope: Scope, receive: Receive, send: Send, close: bool
    ) -> None:
        """Sends ``response``; the connection is closed when a body is left unread, so a
        refused client cannot keep it busy."""
        if close:
            response.headers.update(_CLOSE)
        await response(scope, receive, send)

    async def _throttled(self, scope: Scope, receive: Receive, send: Send, close: bool) -> None:
        THROTTLED.inc()
        retry_after = self.admission.retry_after()
        connection = _connection(scope)
        if connection is not None:
            if len(self._told) >= _MAX_TOLD:
                now = time.monotonic()
                # Cleared unless pruning leaves half: not worth a scan on every refusal
                # (the connections forgotten are only not held if they come back early).
                self._told = with_room(self._told, lambda until: until > now, _MAX_TOLD // 2)
            self._told[connection] = time.monotonic() + retry_after
        message = "The server is busy; retry after the number of seconds in Retry-After."
        response = error(429, message, {"Retry-After": str(retry_after)})
        await self._refuse(response, scope, receive, send, close)

    async def _hold_if_told(self, scope: Scope) -> float:
        """A connection that sends its next request before the ``Retry-After`` it was given
        waits that long here, asleep, before the request is looked at: clients that ignore
        ``Retry-After`` cannot spend the server's time on a stream of 429s. Returns the
        seconds held: they count toward the wait limit."""
        connection = _connection(scope)
        until = self._told.pop(connection, None) if connection is not None else None
        if until is None:
            return 0.0
        held = min(until - time.monotonic(), self.admission.timeout)
        if held <= 0:
            return 0.0
        await asyncio.sleep(held)
        return held

    def _header_problem(self, scope: Scope, path: str) -> Response | None:
        """A 413 for a declared length over the limit, a 400 for a body that is not JSON."""
        length = _header(scope, b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_body:
            return error(413, self._too_large(int(length)))
        if scope["method"] in ("POST", "PUT", "PATCH"):
            problem = self._content_type_problem(scope, path)
            if problem is not None:
                return error(400, problem)
        return None

    def _too_large(self, length: int | None) -> str:
        shown = size_text(self.max_body)
        got = f"; this one has {length} bytes" if length is not None else ""
        return f"The request body must be at most {shown}{got}."

    @staticmethod
    def _content_type_problem(scope: Scope, path: str) -> str | None:
        if path in _NON_JSON_PATHS or path.endswith(_NON_JSON_SUFFIXES):
            return None
        content_type = _content_type(scope)
        if content_type == "application/json" or content_type.endswith("+json"):
            return None
        if _header(scope, b"content-type") is None and _untyped_json_allowed(scope):
            return None  # read as JSON if it parses (``_untyped_problem``)
        return _not_json(content_type)

    @staticmethod
    def _untyped_problem(scope: Scope, path: str, body: bytes) -> Response | None:
        """The 400 for a body without ``Content-Type`` (let through by the header checks
        for a Basic or Bearer caller) that does not parse as JSON."""
        if scope["method"] not in ("POST", "PUT", "PATCH"):
            return None
        if _header(scope, b"content-type") is not None:
            return None
        if path in _NON_JSON_PATHS or path.endswith(_NON_JSON_SUFFIXES):
            return None
        try:
            # The parser the routes read bodies with (FastAPI's ``request.json()``).
            json.loads(body)
        except (ValueError, RecursionError):
            return error(400, _not_json(""))
        return None


def _content_type(scope: Scope) -> str:
    return (_header(scope, b"content-type") or "").split(";")[0].strip().lower()


def _not_json(content_type: str) -> str:
    shown = content_type or "none"
    return f"Request bodies must be JSON with Content-Type: application/json (got {shown})."


def _untyped_json_allowed(scope: Scope) -> bool:
    """Whether a body without a ``Content-Type`` header (an empty one is a type, refused)
    may be read as JSON when it parses: for Basic and Bearer callers, as the original does
    (scripts send some bodies that way). Never for the documentation page's cookie
    session, nor for a request a browser sends from a page (it carries ``Origin``): a page
    of another site can send a body with no type along with the browser's cookies or
    cached Basic credentials, as a form or a ``text/plain`` body, which stay refused."""
    if _header(scope, b"origin") is not None:
        return False
    scheme = (_header(scope, b"authorization") or "").partition(" ")[0].lower()
    return scheme in ("basic", "bearer")
