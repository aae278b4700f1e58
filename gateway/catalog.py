"""What the gateway keeps of the item types: which fields refer to other records.

Item types change rarely; the gateway reads them all at most every ``TTL`` seconds
instead of once per request.
"""

from __future__ import annotations

import asyncio
import time

from plumbline.common.rpc import ServiceClient
from plumbline.core.v1 import core_pb2
from plumbline.gateway.includes import FIELD_LINKS
from plumbline.items.v1 import items_pb2

TTL = 5.0


class ItemTypeCache:
    """Field links of every item type, refreshed after ``TTL`` seconds."""

    def __init__(self, items: ServiceClient, ttl: float = TTL) -> None:
        self.items = items
        self.ttl = ttl
        self._links: dict[str, str] = {}
        self._loaded_at = -1.0
        self._lock = asyncio.Lock()

    async def field_links(self) -> dict[str, str]:
        """``data.fields.<name>`` to the referenced resource type, for every item type."""
        if time.monotonic() - self._loaded_at > self.ttl or self._loaded_at < 0:
            async with self._lock:
                if time.monotonic() - self._loaded_at > self.ttl or self._loaded_at < 0:
                    self._links = await self._load()
                    self._loaded_at = time.monotonic()
        return self._links

    async def _load(self) -> dict[str, str]:
        links: dict[str, str] = {}
        start = 0
        while True:
            reply = await self.items.ListItemTypes(
                items_pb2.ListItemTypesRequest(page=core_pb2.Page(start_at=start, max_results=50))
            )
            for item_type in reply.item_types:
                for field in item_type.fields:
                    target = FIELD_LINKS.get(field.field_type)
                    if target is not None:
                        links[f"data.fields.{field.name}"] = target
            start += len(reply.item_types)
            if not reply.item_types or start >= reply.page_info.total_results:
                return links
