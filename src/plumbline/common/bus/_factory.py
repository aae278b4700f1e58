"""Chooses the bus by URL."""

from __future__ import annotations

from plumbline.common.bus._base import Bus
from plumbline.common.errors import InvalidArgument


def create_bus(url: str, stream: str, prefix: str, partitions: int = 1) -> Bus:
    """``memory://``, ``nats://host:port``, or ``follow://host:port`` (the memory bus of
    the process whose gRPC port that is, followed: ``_follow``); anything else is refused.
    ``partitions``: how many partitions durable consumers split events into
    (``Bus.partitions``)."""
    if url.startswith("memory://"):
        from plumbline.common.bus._memory import MemoryBus

        return MemoryBus(prefix, partitions)
    if url.startswith(("nats://", "tls://")):
        from plumbline.common.bus._nats import NatsBus

        return NatsBus(url, stream, prefix, partitions)
    if url.startswith("follow://"):
        from plumbline.common.bus._follow import FollowBus

        return FollowBus(url.removeprefix("follow://"), prefix)
    raise InvalidArgument(f"unsupported bus URL {url!r}: use memory:// or nats://host:port")
