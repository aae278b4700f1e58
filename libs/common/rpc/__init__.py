"""gRPC helpers: the server with health and interceptors, and the client channel."""

from plumbline.common.rpc._client import ClientInterceptor, connect, wait_ready
from plumbline.common.rpc._server import (
    Context,
    GrpcServer,
    ServerInterceptor,
    optional,
    page_info,
    page_of,
    service_name,
)

__all__ = [
    "ClientInterceptor",
    "Context",
    "GrpcServer",
    "ServerInterceptor",
    "connect",
    "optional",
    "page_info",
    "page_of",
    "service_name",
    "wait_ready",
]
