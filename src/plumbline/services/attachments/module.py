"""attachments as a runnable module."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from plumbline.api.attachments.v1 import attachments_pb2_grpc as rpc
from plumbline.common.bus import Subscription
from plumbline.common.db import Database
from plumbline.common.events import Event
from plumbline.common.itemsclient import ItemsClient
from plumbline.common.migrations import upgrade
from plumbline.common.outbox import Outbox
from plumbline.common.snapshots import OwnerSnapshots
from plumbline.common.telemetry import traced_handler
from plumbline.runtime import Module, Runtime
from plumbline.services.attachments.api.attachments import AttachmentsServicer
from plumbline.services.attachments.api.files import FilesServicer
from plumbline.services.attachments.api.links import AttachmentLinksServicer
from plumbline.services.attachments.api.messages import message, messages
from plumbline.services.attachments.blobs import BlobStore
from plumbline.services.attachments.files import Files
from plumbline.services.attachments.links import Links
from plumbline.services.attachments.models import attachments, outbox
from plumbline.services.attachments.records import Records

log = logging.getLogger(__name__)

#: The durable consumers of the owners' deletions (items; test plans, cycles and runs).
CONSUMERS = {"items.item.deleted": "attachments-items", "testmgmt.*.deleted": "attachments-tests"}
#: Seconds between sweeps of blobs that failures left behind.
SWEEP_EVERY = 600.0


class AttachmentsModule(Module):
    """Attachment records, their files in the blob store, and where they hang."""

    name = "attachments"

    async def start(self, runtime: Runtime) -> None:
        settings = runtime.settings
        url = settings.database_url_for(self.name)
        if runtime.embedded or settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.outbox = Outbox(self.db, outbox, self.name)
        self.access = runtime.access()
        items = ItemsClient(lambda: runtime.channel("items"), self.name)
        self.store = BlobStore.from_settings(settings)
        log.info("attachment files in %s", self.store.description)
        render = messages(items, self.access)
        self.files = Files(
            self.db,
            self.outbox,
            items,
            self.access,
            self.store,
            settings.max_upload_bytes,
            timedelta(seconds=settings.stale_upload_seconds),
        )
        self.links = Links(self.db, self.outbox, items, self.access)
        records = Records(self.db, self.outbox, items, self.access)
        grpc = runtime.grpc
        grpc.add(
            rpc.add_AttachmentsServicer_to_server,
            AttachmentsServicer(records, self.files, render),
        )
        grpc.add(rpc.add_FilesServicer_to_server, FilesServicer(self.files))
        grpc.add(
            rpc.add_AttachmentLinksServicer_to_server, AttachmentLinksServicer(self.links, render)
        )
        snapshots = OwnerSnapshots(
            self.db,
            attachments,
            items.catalog,
            lambda row, catalog, access: message(row, catalog, False, access),
            self.access,
        )
        runtime.serves_snapshots(self.name, snapshots)
        runtime.publishes(self.outbox)
        self.subscriptions: list[Subscription] = []
        self.sweeping: asyncio.Task[None] | None = None

    async def serve(self, runtime: Runtime) -> None:
        self.outbox.start(runtime.bus)
        await self.access.watch(runtime.bus)
        for subject, durable in CONSUMERS.items():
            self.subscriptions.append(
                await runtime.bus.subscribe(
                    f"{runtime.bus.prefix}.{subject}",
                    traced_handler(self._on_deleted),
                    durable=durable,
                )
            )
        self.sweeping = asyncio.create_task(self._sweep(), name="attachments-sweep")

    async def _on_deleted(self, event: Event) -> None:
        """A deleted item, test plan, cycle or run keeps no attachments (a plan names the
        cycles and runs it took along)."""
        owners = [*event.object_ids, *event.payload.get("records", [])]
        if owners:
            await self.links.forget(owners)

    async def _sweep(self) -> None:
        """Removes blobs that failed uploads and crashes left, now and then."""
        while True:
            try:
                removed = await self.files.sweep()
                if removed:
                    log.info("removed %d leftover blobs and partial uploads", removed)
            except Exception:
                log.warning("the sweep of leftover blobs failed; it will retry", exc_info=True)
            await asyncio.sleep(SWEEP_EVERY)

    async def stop(self) -> None:
        if self.sweeping is not None:
            self.sweeping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.sweeping
        for subscription in self.subscriptions:
            await subscription.stop()
        await self.outbox.stop()
        await self.db.close()
