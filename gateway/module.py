"""The gateway as a runnable module."""

from __future__ import annotations

import logging

from plumbline.common.bus import Subscription
from plumbline.gateway import errors
from plumbline.gateway.auth import Authenticator
from plumbline.gateway.catalog import ItemTypeCache
from plumbline.gateway.deps import Gateway
from plumbline.gateway.middleware import GatewayMiddleware, Throttle
from plumbline.gateway.routes import (
    abstractitems,
    activities,
    categories,
    comments,
    configuration,
    credentials,
    filters,
    items,
    links,
    meta,
    moves,
    oauth,
    permissions,
    projects,
    relationships,
    releases,
    sync,
    tags,
    usergroups,
    users,
    workflow,
)
from plumbline.gateway.upstreams import Upstreams
from plumbline.runtime import Module, Runtime

log = logging.getLogger(__name__)

UPSTREAM_WAIT = 120.0


class GatewayModule(Module):
    """The REST surface."""

    name = "gateway"

    async def start(self, runtime: Runtime) -> None:
        from plumbline.gateway import docs, openapi

        app = runtime.http
        settings = runtime.settings
        errors.install(app)
        for module in (
            meta,
            oauth,
            openapi,
            credentials,
            users,
            usergroups,
            projects,
            permissions,
            activities,
            configuration,
            # PUT /items/treelocation before PUT /items/{id}, which would take it for an id.
            moves,
            items,
            workflow,
            sync,
            relationships,
            tags,
            releases,
            comments,
            links,
            abstractitems,
            filters,
            categories,
        ):
            app.include_router(module.router)
        docs.install(app)
        throttle = Throttle(
            settings.throttle_concurrency, settings.throttle_queue, settings.throttle_timeout
        )
        app.add_middleware(GatewayMiddleware, throttle=throttle, max_body=settings.max_body_bytes)
        self.subscription: Subscription | None = None

    async def serve(self, runtime: Runtime) -> None:
        upstreams = Upstreams.connect(runtime)
        await Upstreams.wait_ready(runtime, UPSTREAM_WAIT)
        auth = Authenticator(upstreams.identity.auth, runtime.settings.auth_cache_ttl)
        await auth.load_keys()
        self.subscription = await runtime.bus.subscribe(
            f"{runtime.bus.prefix}.identity.user.>", auth.on_event
        )
        runtime.http.state.gateway = Gateway(
            runtime.settings, upstreams, auth, ItemTypeCache(upstreams.items.configuration)
        )

    async def stop(self) -> None:
        if self.subscription is not None:
            await self.subscription.stop()
