"""CORS for the API: browsers on the origins identity lists may call it, no others.

The list is ``/system/settings/corsdomains``, stored by identity. Each gateway loads it at
start, replaces it on every ``identity.corsdomains.updated`` event (which carries the whole
list) and reloads it now and then in case an event was missed, so every replica answers
alike without a call per request. A preflight (``OPTIONS`` with ``Origin`` and
``Access-Control-Request-Method``) needs no credentials and takes no throttle slot; an
origin that is not listed gets no CORS headers, on a preflight or any other request.
"""

from __future__ import annotations

from starlette.responses import Response
from starlette.types import Message, Scope, Send

from plumbline.api.core.v1 import core_pb2
from plumbline.api.identity.v1 import identity_pb2_grpc
from plumbline.common.events import Event
from plumbline.gateway.envelope import error

ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE"
#: What a page may send when a preflight does not ask for particular headers.
ALLOW_HEADERS = "Authorization, Content-Type, X-Request-Id"
EXPOSE_HEADERS = "Location, Retry-After, WWW-Authenticate, X-Request-Id"
MAX_AGE = "600"


class CorsPolicy:
    """The origins this gateway answers CORS for."""

    def __init__(self) -> None:
        self.origins: frozenset[str] = frozenset()

    async def load(self, stub: identity_pb2_grpc.CorsSettingsAsyncStub) -> None:
        """Fetches the list from identity."""
        reply = await stub.GetCorsDomains(core_pb2.Empty())
        self.origins = frozenset(reply.domains)

    async def on_event(self, event: Event) -> None:
        """Bus handler for ``identity.corsdomains.updated``."""
        domains = event.payload.get("domains")
        if isinstance(domains, list):
            self.origins = frozenset(d for d in domains if isinstance(d, str))

    def allows(self, origin: str | None) -> bool:
        """Whether ``origin`` (the request's ``Origin`` header) is listed."""
        return origin is not None and origin in self.origins


def _headers(scope: Scope) -> dict[bytes, bytes]:
    return dict(scope.get("headers", ()))


def _policy(scope: Scope) -> CorsPolicy | None:
    gateway = getattr(scope["app"].state, "gateway", None) if "app" in scope else None
    return getattr(gateway, "cors", None)


def _allowed_origin(scope: Scope) -> str | None:
    raw = _headers(scope).get(b"origin")
    if raw is None:
        return None
    origin = raw.decode("latin-1")
    policy = _policy(scope)
    return origin if policy is not None and policy.allows(origin) else None


async def answer_preflight(scope: Scope, send: Send) -> bool:
    """Answers a preflight request; False when ``scope`` is not one."""
    headers = _headers(scope)
    if (
        scope["method"] != "OPTIONS"
        or b"origin" not in headers
        or b"access-control-request-method" not in headers
    ):
        return False
    origin = _allowed_origin(scope)
    response: Response
    if origin is None:
        shown = headers[b"origin"].decode("latin-1")
        response = error(
            403,
            f"The origin {shown!r} may not call this API from a browser; organization "
            "administrators list the allowed origins at /system/settings/corsdomains.",
            {"Vary": "Origin"},
        )
    else:
        requested = headers.get(b"access-control-request-headers", b"").decode("latin-1")
        response = Response(
            status_code=204,
            headers={
                "Access-Control-Allow-Origin": origin,
                "Access-Control-Allow-Methods": ALLOW_METHODS,
                "Access-Control-Allow-Headers": requested.strip() or ALLOW_HEADERS,
                "Access-Control-Max-Age": MAX_AGE,
                "Vary": "Origin",
            },
        )

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    await response(scope, receive, send)
    return True


def with_cors(scope: Scope, send: Send) -> Send:
    """``send`` that adds the CORS headers of a listed ``Origin`` to the response."""
    origin = _allowed_origin(scope)
    if origin is None:
        return send

    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            headers += [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"access-control-expose-headers", EXPOSE_HEADERS.encode()),
                (b"vary", b"Origin"),
            ]
            message = dict(message, headers=headers)
        await send(message)

    return send_with_cors
