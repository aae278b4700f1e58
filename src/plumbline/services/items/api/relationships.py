"""``plumbline.items.v1.Relationships``."""

from __future__ import annotations

from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.items.api.items import ItemMessages
from plumbline.services.items.foreign import vouched
from plumbline.services.items.items import Items
from plumbline.services.items.relationships import Relationships


def relationship_message(row: Any) -> pb.Relationship:
    """A relationships row as a message."""
    return message_of(row, pb.Relationship)


class RelationshipsServicer(items_pb2_grpc.RelationshipsServicer):
    """Thin mapping onto ``Relationships``."""

    def __init__(self, relationships: Relationships, items: Items, render: ItemMessages) -> None:
        self.relationships = relationships
        self.items = items
        self.render = render

    async def ListRelationships(
        self, request: pb.ListRelationshipsRequest, context: Context
    ) -> pb.RelationshipPage:
        start, size = page_of(request.page)
        rows, total = await self.relationships.page(
            optional(request, "project"),
            optional(request, "item"),
            request.upstream,
            start,
            size,
            optional(request, "last_id"),
            request.omit_count,
            vouched(request.foreign),
        )
        info = page_info(start, len(rows), total)
        return pb.RelationshipPage(
            relationships=[relationship_message(r) for r in rows], page_info=info
        )

    async def GetRelationships(
        self, request: core_pb2.IdList, context: Context
    ) -> pb.RelationshipList:
        rows = await self.relationships.get_many(list(request.ids))
        return pb.RelationshipList(relationships=[relationship_message(r) for r in rows])

    async def CreateRelationship(
        self, request: pb.RelationshipInput, context: Context
    ) -> core_pb2.Created:
        rel_type = optional(request, "relationship_type")
        new_id = await self.relationships.create(
            request.from_item, request.to_item, rel_type, vouched(request.foreign)
        )
        return core_pb2.Created(id=new_id)

    async def CreateRelationships(
        self, request: pb.RelationshipInputList, context: Context
    ) -> core_pb2.IdList:
        ids = await self.relationships.create_many(
            [
                (
                    m.from_item,
                    m.to_item,
                    optional(m, "relationship_type"),
                )
                for m in request.relationships
            ],
            vouched(f for m in request.relationships for f in m.foreign),
        )
        return core_pb2.IdList(ids=ids)

    async def UpdateRelationship(
        self, request: pb.RelationshipInput, context: Context
    ) -> core_pb2.Empty:
        rel_type = optional(request, "relationship_type")
        await self.relationships.update(
            request.id, request.from_item, request.to_item, rel_type, vouched(request.foreign)
        )
        return core_pb2.Empty()

    async def DeleteRelationship(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.relationships.delete(request.id)
        return core_pb2.Empty()

    async def ClearSuspect(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.relationships.clear_suspect(request.id)
        return core_pb2.Empty()

    async def ListRelatedItems(
        self, request: pb.ListRelationshipsRequest, context: Context
    ) -> pb.ItemPage:
        start, size = page_of(request.page)
        related, total = await self.relationships.related(
            request.item, request.upstream, start, size, vouched(request.foreign), items_only=True
        )
        ids = [i for i, _ in related]
        rows = await self.items.get_many(ids) if ids else []
        items = await self.render(rows, request.dates_with_time)
        info = page_info(start, len(items), total)
        return pb.ItemPage(items=items, page_info=info)

    async def ListRelated(
        self, request: pb.ListRelationshipsRequest, context: Context
    ) -> pb.RelatedPage:
        start, size = page_of(request.page)
        related, total = await self.relationships.related(
            request.item, request.upstream, start, size, vouched(request.foreign)
        )
        return pb.RelatedPage(
            related=[pb.Related(id=i, foreign=foreign) for i, foreign in related],
            page_info=page_info(start, len(related), total),
        )
