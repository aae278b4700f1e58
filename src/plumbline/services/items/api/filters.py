"""``plumbline.items.v1.Filters``: stored filters and their results."""

from __future__ import annotations

import json
from typing import Any

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.errors import InvalidArgument
from plumbline.common.rpc import Context, message_of, optional, page_info, page_of
from plumbline.services.items.api.items import ItemMessages
from plumbline.services.items.filters import Filters
from plumbline.services.items.items import Items


def filter_message(row: Any) -> pb.Filter:
    """A filters row as a message."""
    return message_of(row, pb.Filter, filter_query_json=row.filter_query.encode())


class FiltersServicer(items_pb2_grpc.FiltersServicer):
    """Thin mapping onto ``Filters``."""

    def __init__(self, filters: Filters, items: Items, render: ItemMessages) -> None:
        self.filters = filters
        self.items = items
        self.render = render

    async def ListFilters(self, request: pb.ListFiltersRequest, context: Context) -> pb.FilterPage:
        start, size = page_of(request.page)
        rows, total = await self.filters.page(
            optional(request, "project"),
            optional(request, "author"),
            request.favorites_only,
            start,
            size,
        )
        return pb.FilterPage(
            filters=[filter_message(r) for r in rows], page_info=page_info(start, len(rows), total)
        )

    async def GetFilters(self, request: core_pb2.IdList, context: Context) -> pb.FilterList:
        rows = await self.filters.get_many(list(request.ids))
        return pb.FilterList(filters=[filter_message(r) for r in rows])

    async def CreateFilter(self, request: pb.Filter, context: Context) -> core_pb2.Created:
        try:
            query = json.loads(request.filter_query_json or b"{}")
        except ValueError:
            raise InvalidArgument("filterQuery must be a JSON object.") from None
        new_id = await self.filters.create(
            request.name,
            request.project_scope,
            optional(request, "specified_project"),
            query,
            request.public,
        )
        return core_pb2.Created(id=new_id)

    async def FilterResults(
        self, request: pb.FilterResultsRequest, context: Context
    ) -> pb.ItemPage:
        start, size = page_of(request.page)
        project = optional(request, "project")
        ids, total = await self.filters.results(
            request.filter, project, start, 0 if request.count_only else size
        )
        rows = await self.items.get_many(ids) if ids else []
        messages = await self.render(rows, request.dates_with_time)
        return pb.ItemPage(items=messages, page_info=page_info(start, len(messages), total))

    async def AddFavoriteFilter(self, request: core_pb2.Id, context: Context) -> core_pb2.Empty:
        await self.filters.favorite(request.id)
        return core_pb2.Empty()
