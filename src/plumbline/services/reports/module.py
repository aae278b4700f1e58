"""reports as a runnable module."""

from __future__ import annotations

from datetime import timedelta

from plumbline.api.reports.v1 import reports_pb2_grpc
from plumbline.common.db import Database
from plumbline.common.migrations import upgrade
from plumbline.common.tokens import UserTokens
from plumbline.runtime import Module, Runtime
from plumbline.services.reports.api.reports import ReportsServicer
from plumbline.services.reports.worker import Worker
from plumbline.services.reports.works import Works


class ReportsModule(Module):
    """Takes report requests and makes them with its worker (replicas share the queue)."""

    name = "reports"

    async def start(self, runtime: Runtime) -> None:
        url = runtime.settings.database_url_for(self.name)
        if runtime.embedded or runtime.settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.access = runtime.access()
        settings = runtime.settings
        self.works = Works(self.db, self.access)
        self.worker = Worker(
            self.works,
            runtime.gateway_url,
            UserTokens(lambda: runtime.channel("identity")),
            settings.reports_concurrency,
            timedelta(seconds=settings.reports_stale_seconds),
            timedelta(days=settings.reports_retention_days),
        )
        runtime.grpc.add(
            reports_pb2_grpc.add_ReportsServicer_to_server,
            ReportsServicer(self.works, self.worker.wake, self.worker.reader_for),
        )

    async def serve(self, runtime: Runtime) -> None:
        await self.access.watch(runtime.bus)
        self.worker.start()

    async def stop(self) -> None:
        await self.worker.stop()
        await self.db.close()
