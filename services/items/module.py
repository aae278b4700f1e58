"""items as a runnable module."""

from __future__ import annotations

import logging

from sqlalchemy.exc import IntegrityError

from plumbline.common.db import Database
from plumbline.common.migrations import upgrade
from plumbline.common.outbox import Outbox
from plumbline.items.v1 import items_pb2_grpc
from plumbline.runtime import Module, Runtime
from plumbline.services.items import configdoc
from plumbline.services.items.api import ItemsServicer
from plumbline.services.items.comments import Comments
from plumbline.services.items.config import Configuration
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.items import Items
from plumbline.services.items.models import outbox
from plumbline.services.items.projects import Projects
from plumbline.services.items.relationships import Relationships
from plumbline.services.items.releases import Releases
from plumbline.services.items.tags import Tags

log = logging.getLogger(__name__)


class ItemsModule(Module):
    """Projects and the abstract-item ID space."""

    name = "items"

    async def start(self, runtime: Runtime) -> None:
        url = runtime.settings.database_url_for(self.name)
        if runtime.embedded or runtime.settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.outbox = Outbox(self.db, outbox, self.name)
        self.projects = Projects(self.db, self.outbox)
        self.ids = IdSpace(self.db)
        self.config = Configuration(self.db)
        if await self.config.is_empty():
            await install_default_configuration(self.config)
        self.items = Items(self.db, self.outbox, self.config, self.ids)
        runtime.grpc.add(
            items_pb2_grpc.add_ItemsServicer_to_server,
            ItemsServicer(
                self.projects,
                self.ids,
                self.config,
                self.items,
                Relationships(self.db, self.outbox, self.config),
                Tags(self.db, self.outbox),
                Releases(self.db, self.outbox),
                Comments(self.db, self.outbox),
            ),
            "plumbline.items.v1.Items",
        )

    async def serve(self, runtime: Runtime) -> None:
        self.outbox.start(runtime.bus)

    async def stop(self) -> None:
        await self.outbox.stop()
        await self.db.close()


async def install_default_configuration(config: Configuration) -> None:
    """The first start's configuration; a replica that loses the race keeps the winner's."""
    try:
        changes = await config.apply(configdoc.default())
    except IntegrityError:
        return
    log.info("installed the default configuration (%d changes)", len(changes))
