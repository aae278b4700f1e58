"""The gateway as a runnable module."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from fastapi import APIRouter, FastAPI, params

from plumbline.api.core.v1 import core_pb2_grpc
from plumbline.common.bus import Subscription
from plumbline.common.bus._follow import FollowBus
from plumbline.gateway import errors
from plumbline.gateway.admission import Admission
from plumbline.gateway.auth import Authenticator
from plumbline.gateway.catalog import ItemTypeCache
from plumbline.gateway.cors import CorsPolicy
from plumbline.gateway.deps import AUTHENTICATED, LABS, Gateway
from plumbline.gateway.dispatch import RouteIndex
from plumbline.gateway.logins import Logins, SharedLoginGuard, login_guard
from plumbline.gateway.middleware import GatewayMiddleware
from plumbline.gateway.routes import (
    abstractitems,
    activities,
    attachments,
    baselines,
    categories,
    comments,
    configuration,
    credentials,
    events,
    files,
    filters,
    imports,
    items,
    links,
    lookup,
    meta,
    moves,
    oauth,
    permissions,
    projects,
    relationships,
    releases,
    reports,
    reqif,
    results,
    roles,
    sync,
    system,
    tags,
    testcycles,
    testgroups,
    testplans,
    testrecords,
    testruns,
    trace,
    usergroups,
    users,
    versions,
    webhooks,
    workflow,
)
from plumbline.gateway.throttle import Transfers
from plumbline.gateway.upstreams import Upstreams
from plumbline.runtime import Module, Runtime

log = logging.getLogger(__name__)

UPSTREAM_WAIT = 120.0
#: How often the revoked credentials and the CORS origins are reloaded, in case an event
#: was missed (a NATS reconnect): events apply them at once, this within the minute the
#: contract of revocation allows.
RELOAD_SECONDS = 30.0


def install_routes(app: FastAPI) -> None:
    """The API's routes, each with its operationId (``openapi.operation_id``), the error
    handlers and the documentation pages.

    Every router is included with its dependencies here: ``AUTHENTICATED`` (the version
    segment checked, then the caller authenticated and made current for the services'
    calls) or ``LABS`` (the same, under ``/rest/labs`` only); the public ones, ``GET
    /rest`` and the token exchange, with none. The order is the routes' matching order.
    """
    from plumbline.gateway import docs, openapi

    errors.install(app)
    routers: tuple[tuple[APIRouter, list[params.Depends]], ...] = (
        (meta.public, []),
        (meta.router, AUTHENTICATED),
        (oauth.router, []),
        (openapi.router, AUTHENTICATED),
        (credentials.router, LABS),
        (roles.router, LABS),
        (users.router, AUTHENTICATED),
        (usergroups.router, AUTHENTICATED),
        (projects.router, AUTHENTICATED),
        (permissions.router, AUTHENTICATED),
        (activities.router, AUTHENTICATED),
        (configuration.router, AUTHENTICATED),
        (system.router, AUTHENTICATED),
        # PUT /items/treelocation before PUT /items/{id}, which would take it for an id.
        (moves.router, AUTHENTICATED),
        (items.router, AUTHENTICATED),
        (workflow.router, AUTHENTICATED),
        (sync.router, AUTHENTICATED),
        (relationships.router, AUTHENTICATED),
        (tags.router, AUTHENTICATED),
        (releases.router, AUTHENTICATED),
        (comments.router, AUTHENTICATED),
        (links.router, AUTHENTICATED),
        (abstractitems.router, AUTHENTICATED),
        (filters.router, AUTHENTICATED),
        (categories.router, LABS),
        (testplans.router, AUTHENTICATED),
        (testgroups.router, AUTHENTICATED),
        (testcycles.router, AUTHENTICATED),
        (testruns.router, AUTHENTICATED),
        (testrecords.router, AUTHENTICATED),
        (results.router, LABS),
        (imports.router, LABS),
        (events.router, LABS),
        (webhooks.router, LABS),
        (trace.router, LABS),
        (lookup.router, LABS),
        (reports.router, LABS),
        (reqif.router, LABS),
        (attachments.router, AUTHENTICATED),
        (files.router, AUTHENTICATED),
        (versions.router, AUTHENTICATED),
        (baselines.router, AUTHENTICATED),
    )
    for router, dependencies in routers:
        app.include_router(
            router, dependencies=dependencies, generate_unique_id_function=openapi.operation_id
        )
    docs.install(app)
    RouteIndex.install(app.router)


class GatewayModule(Module):
    """The REST surface."""

    name = "gateway"

    async def start(self, runtime: Runtime) -> None:
        app = runtime.http
        settings = runtime.settings
        install_routes(app)
        # Per gateway process: each worker and each replica admits for itself.
        admission = Admission(
            settings.throttle_concurrency,
            settings.throttle_queue,
            settings.throttle_timeout,
            settings.throttle_queue_delay,
            settings.throttle_latency,
        )
        app.add_middleware(
            GatewayMiddleware,
            admission=admission,
            max_body=settings.max_body_bytes,
            body_timeout=settings.body_timeout,
            trusted_hosts=settings.trusted_host_names,
            transfers=Transfers(settings.transfer_concurrency, settings.transfer_per_user),
        )
        self.subscriptions: list[Subscription] = []
        self.reloading: asyncio.Task[None] | None = None

    async def serve(self, runtime: Runtime) -> None:
        upstreams = Upstreams.connect(runtime)
        await Upstreams.wait_ready(runtime, UPSTREAM_WAIT)
        settings = runtime.settings
        identity = upstreams.identity
        logins: Logins = login_guard(settings)
        if isinstance(runtime.bus, FollowBus):  # a gateway worker: one count for them all
            logins = SharedLoginGuard(core_pb2_grpc.LoginsStub(runtime.bus.channel))
        auth = Authenticator(identity.auth, settings.auth_cache_ttl, logins)
        cors = CorsPolicy()
        bus, prefix = runtime.bus, runtime.bus.prefix
        # Subscribed before loading, so a change between the two is not lost.
        self.subscriptions = [
            await bus.subscribe(f"{prefix}.identity.user.>", auth.on_event),
            await bus.subscribe(f"{prefix}.identity.apiclient.revoked", auth.on_revoked),
            await bus.subscribe(f"{prefix}.identity.corsdomains.>", cors.on_event),
        ]
        await auth.load_keys()
        await auth.load_revoked(identity.credentials)
        await cors.load(identity.cors)
        self.reloading = asyncio.create_task(self._reload(auth, cors, upstreams))
        runtime.http.state.gateway = Gateway(
            runtime.settings, upstreams, auth, ItemTypeCache(upstreams.items.configuration), cors
        )

    @staticmethod
    async def _reload(auth: Authenticator, cors: CorsPolicy, upstreams: Upstreams) -> None:
        while True:
            await asyncio.sleep(RELOAD_SECONDS)
            try:
                await auth.load_revoked(upstreams.identity.credentials)
                await cors.load(upstreams.identity.cors)
            except Exception:
                log.warning("could not reload revoked credentials and CORS origins", exc_info=True)

    async def stop(self) -> None:
        if self.reloading is not None:
            self.reloading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.reloading
        for subscription in self.subscriptions:
            await subscription.stop()
