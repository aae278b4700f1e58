"""gRPC helpers: the server with health and interceptors, the client channel, and the
in-process channel between the parts of one process."""

from plumbline.common.rpc._address import Target, replicas_of, target_of
from plumbline.common.rpc._client import NO_DEADLINE, ClientInterceptor, connect, wait_ready
from plumbline.common.rpc._inproc import InProcessChannel, InProcessServer
from plumbline.common.rpc._pages import every_page
from plumbline.common.rpc._server import (
    Context,
    GrpcServer,
    ServerInterceptor,
    optional,
    page_info,
    page_of,
    service_name,
)
from plumbline.common.rpc._wire import (
    dataclass_of,
    from_wire,
    given,
    message_of,
    shared_names,
    wire_members,
)

__all__ = [
    "NO_DEADLINE",
    "ClientInterceptor",
    "Context",
    "GrpcServer",
    "InProcessChannel",
    "InProcessServer",
    "ServerInterceptor",
    "Target",
    "connect",
    "dataclass_of",
    "every_page",
    "from_wire",
    "given",
    "message_of",
    "optional",
    "page_info",
    "page_of",
    "replicas_of",
    "service_name",
    "shared_names",
    "target_of",
    "wait_ready",
    "wire_members",
]
