"""OpenTelemetry from the standard ``OTEL_*`` variables; off unless they ask for it.

Tracing turns on when ``OTEL_TRACES_EXPORTER`` names an exporter other than ``none``
or ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set. The trace context travels in gRPC metadata
and in events as ``traceparent`` either way.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.propagate import extract, inject

if TYPE_CHECKING:
    from plumbline.common.events import Event

log = logging.getLogger(__name__)

_enabled = False


def tracing_requested(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the environment asks for traces."""
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(exporter) or bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def setup(service_name: str) -> bool:
    """Installs a tracer provider (OTLP/HTTP, or ``console``) when the environment asks."""
    global _enabled
    if _enabled or not tracing_requested():
        return _enabled
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    name = os.environ.get("OTEL_SERVICE_NAME", f"plumbline-{service_name}")
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    if os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "console":
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _enabled = True
    log.info("OpenTelemetry tracing on for %s", name)
    return True


def enabled() -> bool:
    """Whether tracing was set up in this process."""
    return _enabled


def tracer() -> trace.Tracer:
    """The Plumbline tracer (a no-op one when tracing is off)."""
    return trace.get_tracer("plumbline")


def current_traceparent() -> str | None:
    """The W3C ``traceparent`` of the active span, if any."""
    if not _enabled:
        return None
    carrier: dict[str, str] = {}
    inject(carrier)
    return carrier.get("traceparent")


def attach_traceparent(traceparent: str | None) -> object | None:
    """Makes ``traceparent`` the current context; returns a token for ``detach``."""
    if not _enabled or not traceparent:
        return None
    return otel_context.attach(extract({"traceparent": traceparent}))


def detach(token: object | None) -> None:
    """Undoes ``attach_traceparent``."""
    if token is not None:
        otel_context.detach(token)  # type: ignore[arg-type]


def traced_handler(
    handler: Callable[[Event], Awaitable[None]],
) -> Callable[[Event], Awaitable[None]]:
    """Wraps an event handler so it runs inside the trace of the change it consumes."""

    async def handle(event: Event) -> None:
        token = attach_traceparent(event.traceparent)
        try:
            if _enabled:
                with tracer().start_as_current_span(f"consume {event.type}"):
                    await handler(event)
            else:
                await handler(event)
        finally:
            detach(token)

    return handle


def traced_batch_handler(
    handler: Callable[[list[Event]], Awaitable[None]],
) -> Callable[[list[Event]], Awaitable[None]]:
    """Wraps a batch handler so that each change it consumes has its ``consume`` span in
    its own trace; the spans of a batch last as long as its one handler call."""
    single = traced_handler(lambda event: handler([event]))

    async def handle(events: list[Event]) -> None:
        if not _enabled:
            await handler(events)
        elif len(events) == 1:
            await single(events[0])  # inside the change's trace, as one event is
        else:
            spans = [
                tracer().start_span(f"consume {event.type}", context=_context_of(event))
                for event in events
            ]
            try:
                await handler(events)
            except Exception as exc:
                for span in spans:
                    span.record_exception(exc)
                    span.set_status(trace.Status(trace.StatusCode.ERROR))
                raise
            finally:
                for span in spans:
                    span.end()

    return handle


def _context_of(event: Event) -> otel_context.Context | None:
    """The trace context an event carries, if any."""
    return extract({"traceparent": event.traceparent}) if event.traceparent else None
