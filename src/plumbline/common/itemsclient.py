"""The items service as the services that own abstract items use it: ids from the id
blocks, document keys from the counters, and the configuration (item types and pick-list
options) as a catalog read again every few seconds.

Every call carries the caller's principal (the client interceptor sends it), so the items
service checks the caller's access as it would for a request of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

from grpc import aio

from plumbline.api.items.v1 import items_pb2, items_pb2_grpc
from plumbline.common.catalog import Catalog, Field, ItemType, Option
from plumbline.common.errors import InvalidArgument
from plumbline.common.idblocks import IdAllocator
from plumbline.common.rpc import every_page

#: Seconds the configuration is kept before it is read again.
CATALOG_TTL = 5.0
#: The most document keys the items service reserves in one call
#: (``services/items/idspace.py``'s ``MAX_KEYS``).
KEYS_PER_CALL = 10_000


class ItemsClient:
    """The items service as the services that own abstract items use it."""

    def __init__(self, channel: Callable[[], aio.Channel], owner: str) -> None:
        self._channel = channel
        self.owner = owner
        self.ids = IdAllocator(self._block)
        self._catalog: Catalog | None = None
        self._loaded_at = -1.0
        self._lock = asyncio.Lock()

    def _id_space(self) -> items_pb2_grpc.IdSpaceAsyncStub:
        return items_pb2_grpc.IdSpaceStub(self._channel())

    async def _block(self) -> tuple[int, int]:
        reply = await self._id_space().AllocateIdBlock(
            items_pb2.AllocateIdBlockRequest(owner=self.owner)
        )
        return reply.first_id, reply.size

    async def new_ids(self, count: int) -> list[int]:
        """``count`` fresh abstract-item ids."""
        return await self.ids.next_ids(count)

    async def document_keys(self, project: int, item_type: int, count: int) -> list[str]:
        """``count`` document keys of ``item_type`` in ``project``, in order (an unknown
        project or a folder is a 400 from the items service); more than one call
        reserves, ``KEYS_PER_CALL`` at a time (a cycle of 25,000 runs)."""
        keys: list[str] = []
        while len(keys) < count:
            reply = await self._id_space().ReserveDocumentKeys(
                items_pb2.ReserveKeysRequest(
                    project=project,
                    item_type=item_type,
                    count=min(KEYS_PER_CALL, count - len(keys)),
                )
            )
            keys += reply.keys
        return keys

    async def catalog(self) -> Catalog:
        """The configuration, read again after ``CATALOG_TTL`` seconds."""
        if self._catalog is None or time.monotonic() - self._loaded_at > CATALOG_TTL:
            async with self._lock:
                if self._catalog is None or time.monotonic() - self._loaded_at > CATALOG_TTL:
                    self._catalog = await self._load_catalog()
                    self._loaded_at = time.monotonic()
        return self._catalog

    async def item_type(self, type_key: str) -> ItemType:
        """The item type with ``type_key`` (TSTPL, ATT, ...)."""
        found = (await self.catalog()).by_key(type_key)
        if found is None:
            raise InvalidArgument(f"the configuration has no item type {type_key}")
        return found

    async def _load_catalog(self) -> Catalog:
        stub = items_pb2_grpc.ConfigurationStub(self._channel())
        types: dict[int, ItemType] = {}
        listed = every_page(
            lambda page: stub.ListItemTypes(items_pb2.ListItemTypesRequest(page=page)),
            lambda reply: reply.item_types,
        )
        async for message in listed:
            types[message.id] = _item_type(message)
        options: dict[int, Option] = {}
        pick_lists = {f.pick_list for t in types.values() for f in t.fields if f.pick_list}
        for pick_list in sorted(pick_lists):
            async for o in _options(stub, pick_list):
                options[o.id] = Option(
                    o.id,
                    o.pick_list or pick_list,
                    o.name,
                    o.description,
                    o.value,
                    o.color,
                    o.default,
                    o.active,
                    o.sort_order,
                )
        return Catalog(item_types=types, options=options)


def _options(
    stub: items_pb2_grpc.ConfigurationStub, pick_list: int
) -> AsyncIterator[items_pb2.PickListOption]:
    return every_page(
        lambda page: stub.ListPickListOptions(
            items_pb2.ListOptionsRequest(pick_list=pick_list, page=page)
        ),
        lambda reply: reply.options,
    )


def _item_type(message: items_pb2.ItemType) -> ItemType:
    fields = tuple(
        Field(
            f.id,
            message.id,
            f.name,
            f.label,
            f.field_type,
            f.read_only,
            f.required,
            f.trigger_suspect,
            f.synchronize,
            f.pick_list if f.HasField("pick_list") else None,
            f.text_type,
            f.item_type if f.HasField("item_type") else None,
        )
        for f in message.fields
    )
    return ItemType(
        message.id,
        message.type_key,
        message.display,
        message.display_plural,
        message.description,
        message.image,
        message.category,
        tuple(message.widgets),
        message.system,
        fields,
    )
