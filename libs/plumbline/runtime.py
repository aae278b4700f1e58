"""What a process gives its modules: settings, the bus, the gRPC and HTTP servers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI

from plumbline.common.bus import Bus
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import GrpcServer, ServiceClient
from plumbline.common.settings import Settings


@dataclass
class Runtime:
    """Shared by the modules of one process."""

    settings: Settings
    targets: tuple[str, ...]
    bus: Bus
    grpc: GrpcServer
    http: FastAPI
    embedded: bool
    clients: dict[str, ServiceClient] = field(default_factory=dict)

    def client(self, service: str, stub_class: Any) -> ServiceClient:
        """A client of ``service``: its configured address, or this process's own port."""
        existing = self.clients.get(service)
        if existing is not None:
            return existing
        address = self.settings.address_of(service)
        if address is None:
            if service not in self.targets:
                raise InvalidArgument(
                    f"PLUMBLINE_{service.upper()}_ADDR is not set and the {service} "
                    "service does not run in this process"
                )
            address = f"127.0.0.1:{self.grpc.port}"
        client = ServiceClient(service, address, stub_class, self.settings.grpc_max_message_bytes)
        self.clients[service] = client
        return client


class Module:
    """A unit the runner starts in dependency order and stops in reverse."""

    name: str = ""

    async def start(self, runtime: Runtime) -> None:
        """Before the servers listen: open stores, register servicers and routes."""

    async def serve(self, runtime: Runtime) -> None:
        """Once the gRPC server listens: start relays and consumers, wait for peers."""

    async def stop(self) -> None:
        """Release everything ``start`` and ``serve`` took."""
