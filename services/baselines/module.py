"""baselines as a runnable module."""

from __future__ import annotations

from plumbline.baselines.v1 import baselines_pb2_grpc as rpc
from plumbline.common.bus import Subscription
from plumbline.common.db import Database
from plumbline.common.inbox import Inbox
from plumbline.common.migrations import upgrade
from plumbline.common.telemetry import traced_handler
from plumbline.runtime import Module, Runtime
from plumbline.services.baselines.api.versions import (
    VersionedRelationshipsServicer,
    VersionsServicer,
)
from plumbline.services.baselines.history import History
from plumbline.services.baselines.models import consumed_events, consumer_positions

#: The durable consumer of the owners' events.
CONSUMER = "baselines"
#: The event sources whose records have versions.
OWNERS = ("items", "testmgmt", "attachments")


class BaselinesModule(Module):
    """The version history of every abstract item, and baselines."""

    name = "baselines"

    async def start(self, runtime: Runtime) -> None:
        url = runtime.settings.database_url_for(self.name)
        if runtime.embedded or runtime.settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.access = runtime.access()
        inbox = Inbox(self.db, consumed_events, consumer_positions)
        self.history = History(self.db, inbox, runtime.settings.consistency_wait, self.access)
        runtime.grpc.add(rpc.add_VersionsServicer_to_server, VersionsServicer(self.history))
        runtime.grpc.add(
            rpc.add_VersionedRelationshipsServicer_to_server,
            VersionedRelationshipsServicer(self.history),
        )
        self.subscriptions: list[Subscription] = []

    async def serve(self, runtime: Runtime) -> None:
        await self.access.watch(runtime.bus)
        for owner in OWNERS:
            self.subscriptions.append(
                await runtime.bus.subscribe(
                    f"{runtime.bus.prefix}.{owner}.>",
                    traced_handler(self.history.record),
                    durable=f"{CONSUMER}-{owner}",
                )
            )

    async def stop(self) -> None:
        for subscription in self.subscriptions:
            await subscription.stop()
        await self.db.close()
