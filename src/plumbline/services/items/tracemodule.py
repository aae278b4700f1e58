"""items' traceability reads as a target of their own (``--target trace``).

A trace, a coverage or an impact reads thousands of rows and spends milliseconds of CPU
each; in the items process they queue beside the point reads and writes of everyone
else. This target serves the same ``plumbline.items.v1.Traceability`` over the items
database, read only, in a process of its own: the embedded default's analytics process,
or a deployment of its own (decision 0030). It writes nothing and runs no migrations:
the items service owns the database. Without it, the items service serves these reads
itself.
"""

from __future__ import annotations

from plumbline.api.items.v1 import items_pb2_grpc as rpc
from plumbline.common.db import Database
from plumbline.runtime import Module, Runtime
from plumbline.services.items.api.trace import TraceabilityServicer
from plumbline.services.items.config import Configuration
from plumbline.services.items.filters import Filters
from plumbline.services.items.trace import Tracing


class TraceModule(Module):
    """Traces, coverage and impact over the items database, apart from the items
    service."""

    name = "trace"

    async def start(self, runtime: Runtime) -> None:
        self.db = Database(runtime.settings.database_url_for("items"))
        self.access = runtime.access()
        tracing = Tracing(
            self.db, Configuration(self.db), Filters(self.db, self.access), self.access
        )
        runtime.grpc.add(rpc.add_TraceabilityServicer_to_server, TraceabilityServicer(tracing))

    async def serve(self, runtime: Runtime) -> None:
        await self.access.watch(runtime.bus)

    async def stop(self) -> None:
        await self.db.close()
