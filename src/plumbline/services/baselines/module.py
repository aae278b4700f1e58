"""baselines as a runnable module."""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial

from plumbline.api.baselines.v1 import baselines_pb2_grpc as rpc
from plumbline.common.db import Database
from plumbline.common.inbox import Inbox
from plumbline.common.leases import Consumer
from plumbline.common.migrations import upgrade
from plumbline.common.outbox import Outbox
from plumbline.common.telemetry import traced_batch_handler
from plumbline.runtime import Module, Runtime
from plumbline.services.baselines.api.baselines import BaselinesServicer
from plumbline.services.baselines.api.traces import HistoricTracesServicer
from plumbline.services.baselines.api.versions import (
    VersionedRelationshipsServicer,
    VersionsServicer,
)
from plumbline.services.baselines.backfill import backfill
from plumbline.services.baselines.baselines import Baselines
from plumbline.services.baselines.folders import Folders
from plumbline.services.baselines.history import History
from plumbline.services.baselines.models import (
    consumed_events,
    consumer_leases,
    consumer_members,
    consumer_positions,
    outbox,
)
from plumbline.services.baselines.tracing import HistoricTraces

#: The durable consumer of the owners' events.
CONSUMER = "baselines"
#: The event sources whose records have versions.
OWNERS = ("items", "testmgmt", "attachments")
#: The owners whose records the history starts from on existing data (``Snapshots``).
SNAPSHOT_OWNERS = OWNERS


class BaselinesModule(Module):
    """The version history of every abstract item, and baselines."""

    name = "baselines"

    async def start(self, runtime: Runtime) -> None:
        url = runtime.settings.database_url_for(self.name)
        if runtime.embedded or runtime.settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.access = runtime.access()
        self.leases = runtime.leases(self.db, (consumer_leases, consumer_members), CONSUMER)
        inbox = Inbox(self.db, consumed_events, consumer_positions, self.leases)
        self.history = History(self.db, inbox, runtime.settings.consistency_wait, self.access)
        runtime.grpc.add(rpc.add_VersionsServicer_to_server, VersionsServicer(self.history))
        runtime.grpc.add(
            rpc.add_VersionedRelationshipsServicer_to_server,
            VersionedRelationshipsServicer(self.history),
        )
        items = partial(runtime.channel, "items")
        self.outbox = Outbox(self.db, outbox, self.name)
        baselines = Baselines(self.db, self.outbox, self.history, items, self.access)
        runtime.publishes(self.outbox)
        folders = Folders(self.db, self.access)
        runtime.grpc.add(rpc.add_BaselinesServicer_to_server, BaselinesServicer(baselines, folders))
        traces = HistoricTraces(self.db, self.history, baselines, self.access)
        runtime.grpc.add(rpc.add_HistoricTracesServicer_to_server, HistoricTracesServicer(traces))
        self.owners = {owner: partial(runtime.channel, owner) for owner in SNAPSHOT_OWNERS}
        self.backfilling: asyncio.Task[None] | None = None

    async def serve(self, runtime: Runtime) -> None:
        self.outbox.start(runtime.bus)
        await self.access.watch(runtime.bus)
        handler = traced_batch_handler(self.history.record_many)
        # This replica's share of the partitions (every one where it runs alone), each
        # with a durable consumer per owner.
        await self.leases.start(
            runtime.bus,
            [
                Consumer(f"{runtime.bus.prefix}.{owner}.>", f"{CONSUMER}-{owner}", handler)
                for owner in OWNERS
            ],
        )
        self.backfilling = asyncio.create_task(
            backfill(self.db, self.history, self.owners), name="baselines-backfill"
        )

    async def stop(self) -> None:
        if self.backfilling is not None:
            self.backfilling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.backfilling
        await self.leases.stop()
        await self.outbox.stop()
        await self.db.close()
