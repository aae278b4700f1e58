"""What the gateway keeps of the item types: which fields refer to other records, and
each type's representation (for ``include=data.itemType``).

Item types change rarely; the gateway reads them all at most every ``TTL`` seconds
instead of once per request, and at once after a change made through it.
"""

from __future__ import annotations

import asyncio
import time

from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.common.rpc import every_page
from plumbline.gateway import records, representations
from plumbline.gateway.includes import FIELD_LINKS

TTL = 5.0


class ItemTypeCache:
    """Field links and representations of every item type, refreshed after ``TTL`` seconds."""

    def __init__(
        self, configuration: items_pb2_grpc.ConfigurationAsyncStub, ttl: float = TTL
    ) -> None:
        self.configuration = configuration
        self.ttl = ttl
        self._links: dict[str, str] = {}
        self._types: dict[str, records.ItemType] = {}
        self._loaded_at = -1.0
        self._lock = asyncio.Lock()

    async def field_links(self) -> dict[str, str]:
        """``data.fields.<name>`` to the referenced resource type, for every item type."""
        await self._fresh()
        return self._links

    async def item_types(self) -> dict[str, records.ItemType]:
        """Every item type's representation, by id (as a string, like ``linked``)."""
        await self._fresh()
        return self._types

    def forget(self) -> None:
        """After a change to an item type: the next read reloads."""
        self._loaded_at = -1.0

    def _stale(self) -> bool:
        return self._loaded_at < 0 or time.monotonic() - self._loaded_at > self.ttl

    async def _fresh(self) -> None:
        if self._stale():
            async with self._lock:
                if self._stale():
                    self._links, self._types = await self._load()
                    self._loaded_at = time.monotonic()

    async def _load(self) -> tuple[dict[str, str], dict[str, records.ItemType]]:
        links: dict[str, str] = {}
        types: dict[str, records.ItemType] = {}
        listed = every_page(
            lambda page: self.configuration.ListItemTypes(
                items_pb2.ListItemTypesRequest(page=page)
            ),
            lambda reply: reply.item_types,
        )
        async for item_type in listed:
            types[str(item_type.id)] = representations.item_type(item_type)
            for field in item_type.fields:
                target = FIELD_LINKS.get(field.field_type)
                if target is not None:
                    links[f"data.fields.{field.name}"] = target
        return links, types
