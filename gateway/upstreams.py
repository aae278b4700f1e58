"""The gateway's clients of the services."""

from __future__ import annotations

from dataclasses import dataclass

from plumbline.activity.v1 import activity_pb2_grpc
from plumbline.common.rpc import ServiceClient
from plumbline.identity.v1 import identity_pb2_grpc
from plumbline.items.v1 import items_pb2_grpc
from plumbline.runtime import Runtime


@dataclass
class Upstreams:
    """One client per service."""

    identity: ServiceClient
    items: ServiceClient
    activity: ServiceClient

    @classmethod
    def connect(cls, runtime: Runtime) -> Upstreams:
        """Clients at the configured addresses (or this process's own port)."""
        return cls(
            identity=runtime.client("identity", identity_pb2_grpc.IdentityStub),
            items=runtime.client("items", items_pb2_grpc.ItemsStub),
            activity=runtime.client("activity", activity_pb2_grpc.ActivityStub),
        )

    def all(self) -> list[ServiceClient]:
        """Every client."""
        return [self.identity, self.items, self.activity]
