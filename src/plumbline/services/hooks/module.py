"""hooks as a runnable module."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from plumbline.api.hooks.v1 import hooks_pb2_grpc
from plumbline.common.db import Database
from plumbline.common.inbox import Inbox
from plumbline.common.leases import Consumer
from plumbline.common.migrations import upgrade
from plumbline.common.telemetry import traced_batch_handler
from plumbline.runtime import Module, Runtime
from plumbline.services.hooks.api.changes import ChangesServicer
from plumbline.services.hooks.api.webhooks import WebhooksServicer
from plumbline.services.hooks.delivery import Deliverer, Policy
from plumbline.services.hooks.feed import ChangeFeed
from plumbline.services.hooks.models import (
    consumed_events,
    consumer_leases,
    consumer_members,
    consumer_positions,
)
from plumbline.services.hooks.objects import Records
from plumbline.services.hooks.owners import Owners
from plumbline.services.hooks.secrets import Sealer
from plumbline.services.hooks.webhooks import Webhooks

log = logging.getLogger(__name__)

CONSUMER = "hooks"
#: How often retention looks for changes past their time.
PRUNE_EVERY_SECONDS = 3600.0


class HooksModule(Module):
    """Consumes every service's events into the change feed (replicas share the
    partitions: ``common.leases``), and prunes it to its retention period."""

    name = "hooks"

    async def start(self, runtime: Runtime) -> None:
        url = runtime.settings.database_url_for(self.name)
        if runtime.embedded or runtime.settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.leases = runtime.leases(self.db, (consumer_leases, consumer_members), CONSUMER)
        self.inbox = Inbox(self.db, consumed_events, consumer_positions, self.leases)
        self.access = runtime.access()
        self.feed = ChangeFeed(self.db, self.inbox, runtime.settings.consistency_wait, self.access)
        self.retention = timedelta(days=runtime.settings.events_retention_days)
        self.pruning: asyncio.Task[None] | None = None
        settings = runtime.settings
        sealer = Sealer.from_settings(settings.webhooks_key, settings.data_dir)
        owners = Owners(lambda: runtime.channel("identity"), self.access)
        self.webhooks = Webhooks(
            self.db,
            self.feed,
            self.access,
            owners,
            sealer,
            allow_private=settings.webhooks_allow_private,
            secret_grace=timedelta(hours=settings.webhooks_secret_grace_hours),
        )
        self.deliverer = Deliverer(
            self.db,
            self.feed,
            sealer,
            owners,
            self.leases,
            Policy(
                retry_period=timedelta(hours=settings.webhooks_retry_hours),
                retry_base=settings.webhooks_retry_base,
                timeout=settings.webhooks_timeout,
                allow_private=settings.webhooks_allow_private,
            ),
            Records(
                runtime.gateway_url,
                lambda: runtime.channel("identity"),
                timeout=settings.webhooks_timeout,
            ),
        )
        self.webhooks.asked = self.deliverer.wake
        runtime.grpc.add(hooks_pb2_grpc.add_ChangesServicer_to_server, ChangesServicer(self.feed))
        runtime.grpc.add(
            hooks_pb2_grpc.add_WebhooksServicer_to_server, WebhooksServicer(self.webhooks)
        )

    async def serve(self, runtime: Runtime) -> None:
        await self.access.watch(runtime.bus)
        handler = traced_batch_handler(self.feed.record_many)
        await self.leases.start(
            runtime.bus, [Consumer(f"{runtime.bus.prefix}.>", CONSUMER, handler)]
        )
        self.pruning = asyncio.create_task(self._prune_forever())
        if not runtime.embedded and runtime.settings.gateway_url is None:
            log.warning(
                "PLUMBLINE_GATEWAY_URL is not set: webhook deliveries go without the "
                "changed record (set it to the REST API's address, http://gateway:8080)"
            )
        self.deliverer.start()

    async def _prune_forever(self) -> None:
        """Retention: the changes older than the period go, every ``PRUNE_EVERY_SECONDS``."""
        while True:
            try:
                gone = await self.feed.prune(self.retention)
                if gone:
                    log.info("change feed: pruned %d changes past retention", gone)
                await self.webhooks.prune_log(self.retention)
            except Exception:  # a lost database: try again next time
                log.exception("change feed: pruning failed")
            await asyncio.sleep(PRUNE_EVERY_SECONDS)

    async def stop(self) -> None:
        await self.deliverer.stop()
        if self.pruning is not None:
            self.pruning.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.pruning
        await self.leases.stop()
        await self.feed.close()
        await self.db.close()
