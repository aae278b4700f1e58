"""testmgmt as a runnable module."""

from __future__ import annotations

from plumbline.api.testmgmt.v1 import testmgmt_pb2_grpc as rpc
from plumbline.common.bus import Subscription
from plumbline.common.db import Database
from plumbline.common.events import Event
from plumbline.common.migrations import upgrade
from plumbline.common.outbox import Outbox
from plumbline.common.snapshots import OwnerSnapshots
from plumbline.common.telemetry import traced_handler
from plumbline.runtime import Module, Runtime
from plumbline.services.testmgmt import remote
from plumbline.services.testmgmt.api.cycles import TestCyclesServicer
from plumbline.services.testmgmt.api.groups import TestGroupsServicer
from plumbline.services.testmgmt.api.messages import record_message, record_messages
from plumbline.services.testmgmt.api.plans import TestPlansServicer
from plumbline.services.testmgmt.api.records import TestRecordsServicer
from plumbline.services.testmgmt.api.results import ResultsServicer
from plumbline.services.testmgmt.api.runs import TestRunsServicer
from plumbline.services.testmgmt.cycles import Cycles
from plumbline.services.testmgmt.groups import Groups
from plumbline.services.testmgmt.latest import LatestResults
from plumbline.services.testmgmt.models import outbox, records
from plumbline.services.testmgmt.plans import Plans
from plumbline.services.testmgmt.records import Records
from plumbline.services.testmgmt.results import Results
from plumbline.services.testmgmt.runs import Runs

CONSUMER = "testmgmt"


class TestmgmtModule(Module):
    """Test plans, groups, cycles and runs; keeps no state outside its database."""

    name = "testmgmt"

    async def start(self, runtime: Runtime) -> None:
        url = runtime.settings.database_url_for(self.name)
        if runtime.embedded or runtime.settings.migrate_on_start:
            await upgrade(self.name, url)
        self.db = Database(url)
        self.outbox = Outbox(self.db, outbox, self.name)
        self.access = runtime.access()
        items = remote.Items(lambda: runtime.channel("items"))
        render = record_messages(items, self.access)
        self.groups = Groups(self.db, self.outbox, items, self.access)
        grpc = runtime.grpc
        grpc.add(
            rpc.add_TestRecordsServicer_to_server,
            TestRecordsServicer(Records(self.db, self.outbox, self.access), render),
        )
        grpc.add(
            rpc.add_TestPlansServicer_to_server,
            TestPlansServicer(Plans(self.db, self.outbox, items, self.access), render),
        )
        grpc.add(rpc.add_TestGroupsServicer_to_server, TestGroupsServicer(self.groups))
        grpc.add(
            rpc.add_TestCyclesServicer_to_server,
            TestCyclesServicer(Cycles(self.db, self.outbox, items, self.access), render),
        )
        runs = Runs(self.db, self.outbox, items, self.access)
        grpc.add(
            rpc.add_TestRunsServicer_to_server,
            TestRunsServicer(runs, render, LatestResults(self.db, self.access)),
        )
        grpc.add(rpc.add_ResultsServicer_to_server, ResultsServicer(Results(runs)))
        snapshots = OwnerSnapshots(
            self.db,
            records,
            items.catalog,
            lambda row, catalog, access: record_message(row, catalog, False, access),
            self.access,
        )
        runtime.serves_snapshots(self.name, snapshots)
        runtime.publishes(self.outbox)
        self.subscription: Subscription | None = None

    async def serve(self, runtime: Runtime) -> None:
        self.outbox.start(runtime.bus)
        await self.access.watch(runtime.bus)
        self.subscription = await runtime.bus.subscribe(
            f"{runtime.bus.prefix}.items.item.deleted",
            traced_handler(self._on_item_deleted),
            durable=CONSUMER,
        )

    async def _on_item_deleted(self, event: Event) -> None:
        """A deleted test case leaves the test groups (repeating it changes nothing)."""
        for item in event.object_ids:
            await self.groups.forget_case(item)

    async def stop(self) -> None:
        if self.subscription is not None:
            await self.subscription.stop()
        await self.outbox.stop()
        await self.db.close()
