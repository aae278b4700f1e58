"""The event bus: ``memory://`` inside one process, ``nats://`` (JetStream) across them."""

from plumbline.common.bus._base import (
    MAX_BATCH,
    BatchHandler,
    Bus,
    Handler,
    Subscription,
    subject_matches,
)
from plumbline.common.bus._factory import create_bus

__all__ = [
    "MAX_BATCH",
    "BatchHandler",
    "Bus",
    "Handler",
    "Subscription",
    "create_bus",
    "subject_matches",
]
