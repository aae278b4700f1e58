"""activity as a runnable module."""

from __future__ import annotations

from plumbline.api.activity.v1 import activity_pb2_grpc
from plumbline.common.bus import Subscription
from plumbline.common.db import Database
from plumbline.common.inbox import Inbox
from plumbline.common.migrations import upgrade
from plumbline.common.telemetry import traced_batch_handler
from plumbline.runtime import Module, Runtime
from plumbline.services.activity.api.activities import ActivitiesServicer
from plumbline.services.activity.feed import Feed
from plumbline.services.activity.models import consumed_events, consumer_positions
from plumbline.services.activity.restore import Restorer

CONSUMER = "activity"


class ActivityModule(Module):
    """Consumes every service's events into the activity feed; restores item deletions
    through the items service."""

    name = "activity"

    async def start(self, runtime: Runtime) -> None:
        url = runtime.settings.database_url_for(self.name)
        if runtime.embedded or runtime.settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.inbox = Inbox(self.db, consumed_events, consumer_positions)
        self.access = runtime.access()
        self.feed = Feed(self.db, self.inbox, runtime.settings.consistency_wait, self.access)
        restorer = Restorer(self.db, self.feed, lambda: runtime.channel("items"))
        runtime.grpc.add(
            activity_pb2_grpc.add_ActivitiesServicer_to_server,
            ActivitiesServicer(self.feed, restorer),
        )
        self.subscription: Subscription | None = None

    async def serve(self, runtime: Runtime) -> None:
        await self.access.watch(runtime.bus)
        pattern = f"{runtime.bus.prefix}.>"
        self.subscription = await runtime.bus.subscribe_batch(
            pattern, traced_batch_handler(self.feed.record_many), durable=CONSUMER
        )

    async def stop(self) -> None:
        if self.subscription is not None:
            await self.subscription.stop()
        await self.db.close()
