"""The gateway's typed clients of the services: one stub per proto service."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc

from plumbline.api.activity.v1 import activity_pb2_grpc as activity
from plumbline.api.attachments.v1 import attachments_pb2_grpc as attachments
from plumbline.api.baselines.v1 import baselines_pb2_grpc as baselines
from plumbline.api.core.v1 import core_pb2
from plumbline.api.core.v1 import core_pb2_grpc as core
from plumbline.api.hooks.v1 import hooks_pb2_grpc as hooks
from plumbline.api.identity.v1 import identity_pb2_grpc as identity
from plumbline.api.items.v1 import items_pb2_grpc as items
from plumbline.api.reports.v1 import reports_pb2_grpc as reports
from plumbline.api.testmgmt.v1 import testmgmt_pb2_grpc as testmgmt
from plumbline.common.settings import SERVICES
from plumbline.runtime import Runtime


class IdentityClient:
    """The identity service's stubs."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.auth = identity.AuthStub(channel)
        self.users = identity.UsersStub(channel)
        self.groups = identity.GroupsStub(channel)
        self.permissions = identity.PermissionsStub(channel)
        self.watermarks = core.WatermarksStub(channel)
        self.roles = identity.RolesStub(channel)
        self.credentials = identity.CredentialsStub(channel)
        self.cors = identity.CorsSettingsStub(channel)


class ItemsClient:
    """The items service's stubs; its traceability reads at ``trace`` when a trace
    target serves them apart (``plumbline.services.items.tracemodule``)."""

    def __init__(self, channel: grpc.aio.Channel, trace: grpc.aio.Channel | None = None) -> None:
        self.channel = channel
        self.projects = items.ProjectsStub(channel)
        self.ids = items.IdSpaceStub(channel)
        self.watermarks = core.WatermarksStub(channel)
        self.configuration = items.ConfigurationStub(channel)
        self.items = items.ItemsStub(channel)
        self.moves = items.MovesStub(channel)
        self.workflow = items.WorkflowStub(channel)
        self.sync = items.SyncStub(channel)
        self.relationships = items.RelationshipsStub(channel)
        self.traceability = items.TraceabilityStub(trace or channel)
        self.tags = items.TagsStub(channel)
        self.releases = items.ReleasesStub(channel)
        self.comments = items.CommentsStub(channel)
        self.links = items.LinksStub(channel)
        self.filters = items.FiltersStub(channel)
        self.categories = items.CategoriesStub(channel)
        self.access = core.AccessStub(channel)


class ActivityClient:
    """The activity service's stubs."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.activities = activity.ActivitiesStub(channel)
        self.access = core.AccessStub(channel)
        self.consumers = core.ConsumersStub(channel)


class HooksClient:
    """The hooks service's stubs."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.changes = hooks.ChangesStub(channel)
        self.webhooks = hooks.WebhooksStub(channel)
        self.access = core.AccessStub(channel)
        self.consumers = core.ConsumersStub(channel)


class ReportsClient:
    """The reports service's stubs."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.reports = reports.ReportsStub(channel)
        self.access = core.AccessStub(channel)


class TestmgmtClient:
    """The test management service's stubs."""

    __test__ = False  # a class named Test* is not a test case for pytest

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.records = testmgmt.TestRecordsStub(channel)
        self.plans = testmgmt.TestPlansStub(channel)
        self.groups = testmgmt.TestGroupsStub(channel)
        self.cycles = testmgmt.TestCyclesStub(channel)
        self.runs = testmgmt.TestRunsStub(channel)
        self.watermarks = core.WatermarksStub(channel)
        self.results = testmgmt.ResultsStub(channel)
        self.access = core.AccessStub(channel)


class AttachmentsClient:
    """The attachments service's stubs."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.attachments = attachments.AttachmentsStub(channel)
        self.files = attachments.FilesStub(channel)
        self.links = attachments.AttachmentLinksStub(channel)
        self.watermarks = core.WatermarksStub(channel)
        self.access = core.AccessStub(channel)


class BaselinesClient:
    """The baselines service's stubs."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.versions = baselines.VersionsStub(channel)
        self.relationships = baselines.VersionedRelationshipsStub(channel)
        self.baselines = baselines.BaselinesStub(channel)
        self.traces = baselines.HistoricTracesStub(channel)
        self.watermarks = core.WatermarksStub(channel)
        self.access = core.AccessStub(channel)
        self.consumers = core.ConsumersStub(channel)


#: The services that check access (all but identity, whose outbox they follow), and so
#: keep a cache that ``Settle`` brings up to date.
GUARDED = tuple(s for s in SERVICES if s != "identity")


@dataclass
class Upstreams:
    """One client per service."""

    identity: IdentityClient
    items: ItemsClient
    testmgmt: TestmgmtClient
    attachments: AttachmentsClient
    activity: ActivityClient
    baselines: BaselinesClient
    hooks: HooksClient
    reports: ReportsClient
    #: A channel to each replica of a service (``Runtime.replica_channels``).
    replicas: Callable[[str], Awaitable[list[grpc.aio.Channel]]]
    #: Whether a trace target serves items' traceability reads apart (``separate_trace``).
    trace_apart: bool = False

    @classmethod
    def connect(cls, runtime: Runtime) -> Upstreams:
        """Clients at the configured addresses (or in-process, for services run here)."""
        apart = separate_trace(runtime)
        return cls(
            identity=IdentityClient(runtime.channel("identity")),
            items=ItemsClient(
                runtime.channel("items"), runtime.channel("trace") if apart else None
            ),
            testmgmt=TestmgmtClient(runtime.channel("testmgmt")),
            attachments=AttachmentsClient(runtime.channel("attachments")),
            activity=ActivityClient(runtime.channel("activity")),
            baselines=BaselinesClient(runtime.channel("baselines")),
            hooks=HooksClient(runtime.channel("hooks")),
            reports=ReportsClient(runtime.channel("reports")),
            replicas=runtime.replica_channels,
            trace_apart=apart,
        )

    async def watermarks(self) -> list[core_pb2.Watermark]:
        """Where each event source is now: a feed built from the events (the activity
        feed, the change feed) must have caught up with it before it answers."""
        replies = await asyncio.gather(
            self.identity.watermarks.GetWatermark(core_pb2.Watermark(source="identity")),
            self.items.watermarks.GetWatermark(core_pb2.Watermark(source="items")),
            self.testmgmt.watermarks.GetWatermark(core_pb2.Watermark(source="testmgmt")),
            self.attachments.watermarks.GetWatermark(core_pb2.Watermark(source="attachments")),
            self.baselines.watermarks.GetWatermark(core_pb2.Watermark(source="baselines")),
        )
        return list(replies)

    async def settle_access(self) -> None:
        """After a change of access: every replica of every service that checks access
        has caught up with identity's outbox before the change answers (see
        ``plumbline.common.access``). A balanced channel would reach one replica only,
        so each replica is called on its own channel.
        """
        mark = await self.identity.watermarks.GetWatermark(core_pb2.Watermark(source="identity"))
        guarded = (*GUARDED, "trace") if self.trace_apart else GUARDED
        channels = [c for service in guarded for c in await self.replicas(service)]
        await asyncio.gather(*(core.AccessStub(c).Settle(mark) for c in channels))

    @staticmethod
    async def wait_ready(runtime: Runtime, timeout: float) -> None:
        """Waits until every service answers SERVING (and the trace target, when apart)."""
        for service in (*SERVICES, "trace") if separate_trace(runtime) else SERVICES:
            await runtime.wait_ready(service, timeout)


def separate_trace(runtime: Runtime) -> bool:
    """Whether items' traceability reads are served apart from the items service: at
    ``PLUMBLINE_TRACE_ADDR``, or by a trace target in this process."""
    return runtime.settings.trace_addr is not None or "trace" in runtime.targets
