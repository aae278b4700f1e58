"""activity as a runnable module."""

from __future__ import annotations

from plumbline.api.activity.v1 import activity_pb2_grpc
from plumbline.common.db import Database
from plumbline.common.inbox import Inbox
from plumbline.common.leases import Consumer
from plumbline.common.migrations import upgrade
from plumbline.common.telemetry import traced_batch_handler
from plumbline.runtime import Module, Runtime
from plumbline.services.activity.api.activities import ActivitiesServicer
from plumbline.services.activity.feed import Feed
from plumbline.services.activity.models import (
    consumed_events,
    consumer_leases,
    consumer_members,
    consumer_positions,
)
from plumbline.services.activity.restore import Restorer

CONSUMER = "activity"


class ActivityModule(Module):
    """Consumes every service's events into the activity feed (replicas share the
    partitions: ``common.leases``); restores item deletions through the items service."""

    name = "activity"

    async def start(self, runtime: Runtime) -> None:
        url = runtime.settings.database_url_for(self.name)
        if runtime.embedded or runtime.settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.leases = runtime.leases(self.db, (consumer_leases, consumer_members), CONSUMER)
        self.inbox = Inbox(self.db, consumed_events, consumer_positions, self.leases)
        self.access = runtime.access()
        self.feed = Feed(self.db, self.inbox, runtime.settings.consistency_wait, self.access)
        restorer = Restorer(self.db, self.feed, lambda: runtime.channel("items"))
        runtime.grpc.add(
            activity_pb2_grpc.add_ActivitiesServicer_to_server,
            ActivitiesServicer(self.feed, restorer),
        )

    async def serve(self, runtime: Runtime) -> None:
        await self.access.watch(runtime.bus)
        handler = traced_batch_handler(self.feed.record_many)
        # This replica's share of the partitions (every one where it runs alone).
        await self.leases.start(
            runtime.bus, [Consumer(f"{runtime.bus.prefix}.>", CONSUMER, handler)]
        )

    async def stop(self) -> None:
        await self.leases.stop()
        await self.db.close()
