"""gRPC helpers: the server with health and interceptors, and the client wrapper."""

from plumbline.common.rpc._client import ServiceClient, connect
from plumbline.common.rpc._server import GrpcServer, ServerInterceptor, page_of

__all__ = ["GrpcServer", "ServerInterceptor", "ServiceClient", "connect", "page_of"]
