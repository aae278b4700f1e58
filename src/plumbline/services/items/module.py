"""items as a runnable module."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from functools import partial

from sqlalchemy.exc import IntegrityError

from plumbline.api.items.v1 import items_pb2_grpc as rpc
from plumbline.common.bus import Subscription
from plumbline.common.db import Database
from plumbline.common.migrations import upgrade
from plumbline.common.outbox import Outbox
from plumbline.common.snapshots import OwnerSnapshots
from plumbline.common.telemetry import traced_handler
from plumbline.runtime import Module, Runtime
from plumbline.services.items import configdoc, foreign
from plumbline.services.items.api.baselining import BaseliningServicer
from plumbline.services.items.api.categories import CategoriesServicer
from plumbline.services.items.api.comments import CommentsServicer
from plumbline.services.items.api.configuration import ConfigurationServicer
from plumbline.services.items.api.filters import FiltersServicer
from plumbline.services.items.api.idspace import IdSpaceServicer
from plumbline.services.items.api.items import ItemMessages, ItemsServicer
from plumbline.services.items.api.links import LinksServicer
from plumbline.services.items.api.moves import MovesServicer
from plumbline.services.items.api.projects import ProjectsServicer
from plumbline.services.items.api.relationships import RelationshipsServicer
from plumbline.services.items.api.releases import ReleasesServicer
from plumbline.services.items.api.sync import SyncServicer
from plumbline.services.items.api.tags import TagsServicer
from plumbline.services.items.api.trace import TraceabilityServicer
from plumbline.services.items.api.workflow import WorkflowServicer
from plumbline.services.items.baselining import Baselining
from plumbline.services.items.categories import Categories
from plumbline.services.items.comments import Comments
from plumbline.services.items.config import Configuration
from plumbline.services.items.filters import Filters
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.imports import Importer
from plumbline.services.items.items import Items
from plumbline.services.items.links import Links
from plumbline.services.items.messages import item_message
from plumbline.services.items.models import items as items_table
from plumbline.services.items.models import outbox
from plumbline.services.items.moves import Moves
from plumbline.services.items.projects import Placer, Projects
from plumbline.services.items.relationships import Relationships
from plumbline.services.items.releases import Releases
from plumbline.services.items.restore import Restore
from plumbline.services.items.sync import Sync
from plumbline.services.items.tags import Tags
from plumbline.services.items.trace import Tracing
from plumbline.services.items.workflow import Workflow

log = logging.getLogger(__name__)


class ItemsModule(Module):
    """Projects, the abstract-item ID space, the configuration (item types, fields,
    workflows) and the items with everything hung on them: relationships, tags, releases,
    comments, links, filters, categories, baselining reads and snapshots."""

    name = "items"

    async def start(self, runtime: Runtime) -> None:
        url = runtime.settings.database_url_for(self.name)
        if runtime.embedded or runtime.settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.outbox = Outbox(self.db, outbox, self.name)
        self.access = runtime.access()
        self.placing: asyncio.Task[None] | None = None
        self.placer = Placer(lambda: runtime.channel("identity"))
        self.projects = Projects(self.db, self.outbox, self.access, self.placer)
        self.ids = IdSpace(self.db)
        self.config = Configuration(self.db)
        if await self.config.is_empty():
            await install_default_configuration(self.config)
        self.items = Items(self.db, self.outbox, self.config, self.ids, self.access)
        items = self.items
        render = ItemMessages(self.config, self.access)
        sync = Sync(items, self.config)
        links = Links(items)
        grpc = runtime.grpc
        importer = Importer(items, self.ids)
        grpc.add(
            rpc.add_ProjectsServicer_to_server,
            ProjectsServicer(self.projects, self.config, importer),
        )
        grpc.add(rpc.add_IdSpaceServicer_to_server, IdSpaceServicer(self.ids))
        runtime.publishes(self.outbox)
        grpc.add(
            rpc.add_ConfigurationServicer_to_server, ConfigurationServicer(self.config, self.access)
        )
        restore = Restore(self.db, self.outbox, self.config, self.access)
        grpc.add(rpc.add_ItemsServicer_to_server, ItemsServicer(items, links, render, restore))
        grpc.add(rpc.add_MovesServicer_to_server, MovesServicer(Moves(items)))
        grpc.add(rpc.add_WorkflowServicer_to_server, WorkflowServicer(Workflow(items)))
        grpc.add(rpc.add_SyncServicer_to_server, SyncServicer(sync, render))
        relationships = Relationships(self.db, self.outbox, self.config, self.access)
        grpc.add(
            rpc.add_RelationshipsServicer_to_server,
            RelationshipsServicer(relationships, items, render),
        )
        tags = Tags(self.db, self.outbox, self.access)
        grpc.add(rpc.add_TagsServicer_to_server, TagsServicer(tags, items, render))
        releases = Releases(self.db, self.outbox, self.access)
        grpc.add(rpc.add_ReleasesServicer_to_server, ReleasesServicer(releases))
        comments = Comments(self.db, self.outbox, self.access)
        grpc.add(rpc.add_CommentsServicer_to_server, CommentsServicer(comments))
        grpc.add(rpc.add_LinksServicer_to_server, LinksServicer(links))
        filters = Filters(self.db, self.access)
        grpc.add(rpc.add_FiltersServicer_to_server, FiltersServicer(filters, items, render))
        if "trace" not in runtime.targets:  # else that target serves them (tracemodule)
            grpc.add(
                rpc.add_TraceabilityServicer_to_server,
                TraceabilityServicer(Tracing(self.db, self.config, filters, self.access)),
            )
        baselining = Baselining(self.db, self.config, filters, self.access)
        grpc.add(rpc.add_BaseliningServicer_to_server, BaseliningServicer(baselining))
        snapshots = OwnerSnapshots(
            self.db,
            items_table,
            self.config.catalog,
            lambda row, catalog, _: item_message(row, catalog, False, None),
            self.access,
            where=[items_table.c.active.is_(True)],
        )
        runtime.serves_snapshots(self.name, snapshots)
        categories = Categories(self.db, self.outbox, self.config, self.access)
        grpc.add(rpc.add_CategoriesServicer_to_server, CategoriesServicer(categories))
        self.subscriptions: list[Subscription] = []

    async def serve(self, runtime: Runtime) -> None:
        self.outbox.start(runtime.bus)
        await self.access.watch(runtime.bus)
        for subject, durable in foreign.DELETED.items():
            self.subscriptions.append(
                await runtime.bus.subscribe(
                    f"{runtime.bus.prefix}.{subject}",
                    traced_handler(partial(foreign.on_deleted, self.db)),
                    durable=durable,
                )
            )
        self.placing = asyncio.create_task(
            self.placer.keep(self.projects.placements), name="items-placements"
        )

    async def stop(self) -> None:
        if self.placing is not None:
            self.placing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.placing
        for subscription in self.subscriptions:
            await subscription.stop()
        await self.outbox.stop()
        await self.db.close()


async def install_default_configuration(config: Configuration) -> None:
    """The first start's configuration; a replica that loses the race keeps the winner's."""
    try:
        changes = await config.apply(configdoc.default())
    except IntegrityError:
        return
    log.info("installed the default configuration (%d changes)", len(changes))
