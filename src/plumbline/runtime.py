"""What a process gives its modules: settings, the bus, the gRPC and HTTP servers."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import FastAPI
from grpc import aio
from sqlalchemy import Table

from plumbline.api.core.v1 import core_pb2_grpc
from plumbline.common.access import AccessCache, AccessServicer, identity_fetch
from plumbline.common.bus import Bus
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument
from plumbline.common.leases import ConsumersServicer, Leases
from plumbline.common.outbox import Outbox, WatermarksServicer
from plumbline.common.rpc import (
    GrpcServer,
    InProcessChannel,
    connect,
    replicas_of,
    target_of,
    wait_ready,
)
from plumbline.common.settings import Settings
from plumbline.common.snapshots import OwnerSnapshots, SnapshotsServicer


@dataclass
class Runtime:
    """Shared by the modules of one process."""

    settings: Settings
    targets: tuple[str, ...]
    bus: Bus
    grpc: GrpcServer
    http: FastAPI
    embedded: bool
    channels: dict[str, aio.Channel] = field(default_factory=dict)
    #: The address of each service :meth:`channel` reaches over the network.
    addresses: dict[str, str] = field(default_factory=dict)
    access_cache: AccessCache | None = None
    watermarks: WatermarksServicer | None = None
    consumers: ConsumersServicer | None = None
    snapshots: SnapshotsServicer | None = None
    #: Where this process serves HTTP (``http://host:port``), once it listens.
    http_url: str | None = None

    def gateway_url(self) -> str | None:
        """The REST API's base URL for calls a service makes as a user: the configured
        gateway, or this process's own when it serves the API (the embedded default)."""
        return self.settings.gateway_url or (self.http_url if self.embedded else None)

    def channel(self, service: str) -> aio.Channel:
        """A channel to ``service``: its configured address, or (when it runs in this
        process) its servicers here, called in-process without a socket.

        One per service and process; the runner closes them after the modules stop.
        """
        existing = self.channels.get(service)
        if existing is not None:
            return existing
        settings = self.settings
        address = settings.address_of(service)
        channel: aio.Channel
        if address is not None:
            channel = connect(
                service, address, settings.grpc_max_message_bytes, settings.grpc_timeout
            )
            self.addresses[service] = address
        elif service in self.targets:
            channel = InProcessChannel(
                self.grpc.local, service, settings.grpc_max_message_bytes, settings.grpc_timeout
            )
        else:
            raise InvalidArgument(
                f"PLUMBLINE_{service.upper()}_ADDR is not set and the {service} "
                "service does not run in this process"
            )
        self.channels[service] = channel
        return channel

    async def replica_channels(self, service: str) -> list[aio.Channel]:
        """A channel to each replica of ``service`` as its address names them now (the
        entries of a list, what a ``dns:`` name resolves to), for calls every replica
        must get; one channel, :meth:`channel`'s, when the address is a single one."""
        shared = self.channel(service)
        address = self.addresses.get(service)  # None in this process: one replica, this
        if address is None or not target_of(service, address).round_robin:
            return [shared]
        found = []
        replicas = await replicas_of(service, address)
        # Replicas gone since the last call (pods replaced): their channels go too.
        now = {f"{service}@{replica}" for replica in replicas}
        for key in [k for k in self.channels if k.startswith(f"{service}@") and k not in now]:
            await self.channels.pop(key).close()
        for replica in replicas:
            key = f"{service}@{replica}"
            if key not in self.channels:
                self.channels[key] = connect(
                    service,
                    replica,
                    self.settings.grpc_max_message_bytes,
                    self.settings.grpc_timeout,
                )
            found.append(self.channels[key])
        return found

    def publishes(self, outbox: Outbox) -> None:
        """Serves the position of ``outbox`` (``plumbline.core.v1.Watermarks``, one
        servicer per process answering for each of its services' outboxes)."""
        if self.watermarks is None:
            self.watermarks = WatermarksServicer()
            self.grpc.add(core_pb2_grpc.add_WatermarksServicer_to_server, self.watermarks)
        self.watermarks.outboxes[outbox.service] = outbox

    def leases(self, db: Database, tables: tuple[Table, Table], consumer: str) -> Leases:
        """This replica's share of the partitions of ``consumer`` (``common.leases``),
        as many as the deployment splits events into; how far behind they are is served
        (``plumbline.core.v1.Consumers``)."""
        leases = Leases(
            db,
            tables,
            consumer,
            self.settings.event_partitions,
            self.settings.consumer_lease_seconds,
        )
        if self.consumers is None:
            self.consumers = ConsumersServicer()
            self.grpc.add(core_pb2_grpc.add_ConsumersServicer_to_server, self.consumers)
        self.consumers.leases[consumer] = leases
        return leases

    def serves_snapshots(self, owner: str, snapshots: OwnerSnapshots) -> None:
        """Serves ``owner``'s records for the history (``plumbline.core.v1.Snapshots``,
        one servicer per process answering for each owner it runs)."""
        if self.snapshots is None:
            self.snapshots = SnapshotsServicer()
            self.grpc.add(core_pb2_grpc.add_SnapshotsServicer_to_server, self.snapshots)
        self.snapshots.owners[owner] = snapshots

    def access(self) -> AccessCache:
        """This process's cache of who may do what, shared by its modules.

        The first call creates it (fetching from identity) and serves its ``Settle``;
        each module that guards project data calls ``watch`` on it when it serves.
        """
        if self.access_cache is None:
            fetch = identity_fetch(lambda: self.channel("identity"))
            self.access_cache = AccessCache(fetch, self.settings.access_cache_ttl)
            self.grpc.add(
                core_pb2_grpc.add_AccessServicer_to_server, AccessServicer(self.access_cache)
            )
        return self.access_cache

    async def wait_ready(self, service: str, timeout: float) -> None:
        """Waits until ``service`` answers SERVING where :meth:`channel` reaches it."""
        channel = self.channel(service)
        address = self.addresses.get(service)
        where = "in this process" if address is None else f"at {address}"
        await wait_ready(channel, f"the {service} service {where}", timeout)


class Module:
    """A unit the runner starts in dependency order and stops in reverse."""

    name: str = ""

    async def start(self, runtime: Runtime) -> None:
        """Before the servers listen: open stores, register servicers and routes."""

    async def serve(self, runtime: Runtime) -> None:
        """Once the gRPC server listens: start relays and consumers, wait for peers."""

    async def stop(self) -> None:
        """Release everything ``start`` and ``serve`` took."""
