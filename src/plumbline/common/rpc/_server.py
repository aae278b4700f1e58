"""One gRPC server per process, with health, context and error mapping."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias, TypeVar, cast

import grpc
from google.protobuf.message import Message
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import Histogram

from plumbline.api.core.v1 import core_pb2
from plumbline.common import telemetry
from plumbline.common.context import from_metadata, principal_var, request_id_var
from plumbline.common.errors import PlumblineError
from plumbline.common.rpc._client import MAX_MESSAGE
from plumbline.common.rpc._inproc import InProcessServer

log = logging.getLogger(__name__)

Servicer = TypeVar("Servicer")

#: The context argument of every servicer method.
Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]

#: Seconds before a client is asked (GOAWAY) to reconnect. grpc re-resolves a dns:///
#: name only when a connection ends, so without this a caller balancing over a headless
#: Service would never send to replicas added after it connected (an HPA scaling out).
MAX_CONNECTION_AGE = 60.0
#: Seconds calls in flight on an aged connection may still take: a day, since a transfer
#: has no deadline (it lasts while its pieces keep coming, see ``rpc.NO_DEADLINE``), and
#: a shorter grace would cut a long upload or download off mid-way. New calls go to a
#: new connection at once all the same.
CONNECTION_AGE_GRACE = 24 * 3600.0

GRPC_SECONDS = Histogram("plumbline_grpc_server_seconds", "gRPC handling time", ["method", "code"])


def page_of(page: core_pb2.Page) -> tuple[int, int]:
    """(start_at, max_results) of a request page; the gateway validated the range."""
    return page.start_at, page.max_results or 20


def service_name(servicer: object) -> str:
    """The full proto name of the service ``servicer`` implements.

    Generated servicer bases live in ``<file>_pb2_grpc`` and are named
    ``<Service>Servicer``; the proto package is that of ``<file>_pb2``'s descriptor
    (the Python package is ``plumbline.api.<svc>.v1``, the proto one ``plumbline.<svc>.v1``).
    """
    for base in type(servicer).__mro__:
        if base.__module__.endswith("_pb2_grpc") and base.__name__.endswith("Servicer"):
            messages = sys.modules[base.__module__.removesuffix("_grpc")]
            package = messages.DESCRIPTOR.package
            return f"{package}.{base.__name__.removesuffix('Servicer')}"
    raise TypeError(f"{type(servicer).__name__} does not extend a generated servicer")


def page_info(start: int, count: int, total: int) -> core_pb2.PageInfo:
    """The page info of ``count`` records from ``start`` out of ``total``."""
    return core_pb2.PageInfo(start_index=start, result_count=count, total_results=total)


def optional(message: Message, field: str) -> Any:
    """The value of an ``optional`` field, or None when it is not set."""
    return getattr(message, field) if message.HasField(field) else None


class ServerInterceptor(grpc.aio.ServerInterceptor):
    """Restores the caller's context and maps domain errors to status codes."""

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(details)
        if handler is None:
            return handler
        method = details.method
        metadata = {k: v for k, v in details.invocation_metadata or () if isinstance(v, str)}
        # Under grpc.aio the behaviours are coroutine functions taking the aio context;
        # the stubs describe the synchronous API's.
        if handler.unary_unary is not None:
            inner = cast(Callable[[Any, Context], Awaitable[Any]], handler.unary_unary)
            return grpc.unary_unary_rpc_method_handler(
                _restoring(inner, method, metadata),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_unary is not None:
            streamed = cast(Callable[[Any, Context], Awaitable[Any]], handler.stream_unary)
            return grpc.stream_unary_rpc_method_handler(
                _restoring(_draining(streamed), method, metadata),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            streaming = cast(Callable[[Any, Context], AsyncIterator[Any]], handler.unary_stream)
            return grpc.unary_stream_rpc_method_handler(
                _restoring_stream(streaming, method, metadata),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


@contextlib.asynccontextmanager
async def _serving(
    method: str, metadata: dict[str, str], context: Context, traced: bool
) -> AsyncIterator[None]:
    """One call in the caller's context (principal, request id and, when ``traced``, the
    trace), timed, its domain errors as status codes and anything else as INTERNAL."""
    principal, request_id = from_metadata(metadata)
    p_token = principal_var.set(principal)
    r_token = request_id_var.set(request_id)
    t_token = telemetry.attach_traceparent(metadata.get("traceparent")) if traced else None
    started = time.perf_counter()
    code = "OK"
    try:
        yield
    except PlumblineError as exc:
        code = exc.grpc_code.name
        await context.abort(exc.grpc_code, exc.message)
    except grpc.aio.AbortError:
        raise
    except Exception:
        code = "INTERNAL"
        log.exception("unhandled error in %s", method)
        await context.abort(grpc.StatusCode.INTERNAL, "The server could not complete the request.")
    finally:
        GRPC_SECONDS.labels(method, code).observe(time.perf_counter() - started)
        telemetry.detach(t_token)
        request_id_var.reset(r_token)
        principal_var.reset(p_token)


def _restoring_stream(
    inner: Callable[[Any, Context], AsyncIterator[Any]], method: str, metadata: dict[str, str]
) -> Callable[[Any, Context], AsyncIterator[Any]]:
    """A server-streaming ``inner`` run in the caller's context, its domain errors as
    status codes (before or after it has sent messages). Untraced: a span cannot stay
    current across the yields."""

    async def wrapper(request: Any, context: Context) -> AsyncIterator[Any]:
        async with _serving(method, metadata, context, traced=False):
            streamed = inner(request, context)
            if hasattr(streamed, "__aiter__"):
                async for message in streamed:
                    yield message
            else:  # a handler that writes with context.write (grpc's health Watch)
                await cast(Awaitable[None], streamed)

    return wrapper


def _draining(
    inner: Callable[[Any, Context], Awaitable[Any]],
) -> Callable[[Any, Context], Awaitable[Any]]:
    """``inner``, a client-streamed behaviour, that takes the caller's remaining messages
    before it refuses the call. grpc's client reports a status that arrives while it is
    still sending as INTERNAL ("Internal error from Core"): a refusal after the first of
    many messages (no access to the project of an import or upload) would reach the
    caller as a server error about one time in twenty."""

    async def behaviour(requests: AsyncIterator[Any], context: Context) -> Any:
        try:
            return await inner(requests, context)
        except PlumblineError:
            # Nothing more to learn from the rest; a reader that broke off mid-way (the
            # caller left) has already ended the call.
            with contextlib.suppress(Exception):
                async for _ in requests:
                    pass
            raise

    return behaviour


def _restoring(
    inner: Callable[[Any, Context], Awaitable[Any]], method: str, metadata: dict[str, str]
) -> Callable[[Any, Context], Awaitable[Any]]:
    """``inner`` run in the caller's context, its domain errors as status codes."""

    async def wrapper(request: Any, context: Context) -> Any:
        async with _serving(method, metadata, context, traced=True):
            if telemetry.enabled():
                with telemetry.tracer().start_as_current_span(method):
                    return await inner(request, context)
            return await inner(request, context)

    return wrapper


class GrpcServer:
    """The process's gRPC server; modules add their servicers before ``start``."""

    def __init__(
        self,
        host: str,
        port: int,
        max_message: int = MAX_MESSAGE,
        max_connection_age: float = MAX_CONNECTION_AGE,
    ) -> None:
        interceptors = [ServerInterceptor()]
        self.server = grpc.aio.server(
            interceptors=interceptors,
            options=[
                ("grpc.so_reuseport", 0),
                ("grpc.max_receive_message_length", max_message),
                ("grpc.max_send_message_length", max_message),
                ("grpc.max_connection_age_ms", int(max_connection_age * 1000)),
                ("grpc.max_connection_age_grace_ms", int(CONNECTION_AGE_GRACE * 1000)),
            ],
        )
        #: The same handlers for callers in this process (``InProcessChannel``).
        self.local = InProcessServer(interceptors, max_message)
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self._local_registry())
        self.requested = f"{host}:{port}"
        self.port = 0
        self.services: list[str] = []

    def add(
        self, register: Callable[[Servicer, grpc.aio.Server], None], servicer: Servicer
    ) -> None:
        """Registers ``servicer`` with its generated ``add_..._to_server`` function."""
        register(servicer, self.server)
        register(servicer, self._local_registry())
        self.services.append(service_name(servicer))

    def _local_registry(self) -> grpc.aio.Server:
        # The generated functions call only add_generic_rpc_handlers and
        # add_registered_method_handlers, which the in-process server has.
        return cast(grpc.aio.Server, self.local)

    async def start(self) -> int:
        """Binds and starts; returns the bound port."""
        self.port = self.server.add_insecure_port(self.requested)
        if self.port == 0:
            raise OSError(f"cannot bind gRPC to {self.requested}")
        await self.server.start()
        self.local.start()
        return self.port

    async def set_serving(self, serving: bool) -> None:
        """Health of the whole process and of each service."""
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        await self.health.set("", status)
        for name in self.services:
            await self.health.set(name, status)

    async def stop(self, grace: float) -> None:
        """Stops accepting calls and lets in-flight ones finish within ``grace``."""
        await asyncio.gather(self.server.stop(grace), self.local.stop(grace))
