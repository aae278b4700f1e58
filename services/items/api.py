"""items' gRPC servicer."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

import grpc

from plumbline.common.context import current_principal
from plumbline.common.dates import format_datetime, parse_iso
from plumbline.common.errors import InvalidArgument, PlumblineError
from plumbline.common.rpc import page_of
from plumbline.core.v1 import core_pb2
from plumbline.items.v1 import items_pb2 as pb
from plumbline.items.v1 import items_pb2_grpc
from plumbline.services.items.categories import Categories
from plumbline.services.items.collab_api import CollaborationServicer
from plumbline.services.items.comments import Comments
from plumbline.services.items.config import Catalog, Configuration
from plumbline.services.items.config_api import ConfigServicer
from plumbline.services.items.fields import show
from plumbline.services.items.filters import Filters
from plumbline.services.items.idspace import IdSpace
from plumbline.services.items.items import ItemInput, Items, Search, search
from plumbline.services.items.links import Links
from plumbline.services.items.moves import Moves
from plumbline.services.items.projects import ProjectInput, Projects
from plumbline.services.items.relationships import Relationships
from plumbline.services.items.releases import Releases
from plumbline.services.items.sync import Sync
from plumbline.services.items.tags import Tags

Ctx: TypeAlias = grpc.aio.ServicerContext


def project_message(row: Any) -> pb.Project:
    """A projects row as a message; ``fields`` carries name and projectKey too."""
    fields = json.loads(row.fields_json)
    fields["name"] = row.name
    if row.project_key is not None:
        fields["projectKey"] = row.project_key
    message = pb.Project(
        id=row.id,
        project_key=row.project_key or "",
        is_folder=row.is_folder,
        created_date=format_datetime(row.created_at),
        modified_date=format_datetime(row.modified_at),
        created_by=row.created_by,
        modified_by=row.modified_by,
        fields_json=json.dumps(fields).encode(),
    )
    if row.parent is not None:
        message.parent = row.parent
    return message


def _input(message: pb.ProjectInput) -> ProjectInput:
    fields = None
    if message.HasField("fields_json"):
        try:
            fields = json.loads(message.fields_json)
        except ValueError:
            raise InvalidArgument("fields must be a JSON object") from None
        if not isinstance(fields, dict):
            raise InvalidArgument("fields must be a JSON object")
    return ProjectInput(
        project_key=message.project_key if message.HasField("project_key") else None,
        is_folder=message.is_folder if message.HasField("is_folder") else None,
        parent=message.parent if message.HasField("parent") else None,
        clear_parent=message.clear_parent,
        fields=fields,
    )


def item_message(row: Any, catalog: Catalog, dates_with_time: bool, caller_id: int) -> pb.Item:
    """An items row as the wire record (fields in the caller's date form)."""
    item_type = catalog.item_types.get(row.item_type)
    stored = json.loads(row.fields_json)
    fields = {
        "documentKey": row.document_key,
        "globalId": row.global_id,
        **show(item_type, stored, dates_with_time),
    }
    locked_by_other = row.locked and row.locked_by != caller_id
    message = pb.Item(
        id=row.id,
        document_key=row.document_key,
        global_id=row.global_id,
        project=row.project,
        item_type=row.item_type,
        created_date=format_datetime(row.created_at),
        modified_date=format_datetime(row.modified_at),
        last_activity_date=format_datetime(row.last_activity_at),
        created_by=row.created_by,
        modified_by=row.modified_by,
        fields_json=json.dumps(fields).encode(),
        location=pb.ItemLocation(
            sort_order=row.sort_order,
            global_sort_order=row.global_sort_order,
            sequence=row.sequence,
            project=row.project,
        ),
        lock=pb.ItemLock(
            locked=row.locked,
            last_locked_date=format_datetime(row.last_locked_date) if row.last_locked_date else "",
        ),
        allowed=["GET"] if locked_by_other else ["GET", "PUT", "DELETE"],
    )
    if row.child_item_type is not None:
        message.child_item_type = row.child_item_type
    if row.parent is not None:
        message.location.parent_item = row.parent
    if row.locked_by is not None:
        message.lock.locked_by = row.locked_by
    return message


def item_input(message: pb.ItemInput) -> ItemInput:
    """The domain input of an ItemInput message."""
    fields: dict[str, Any] = {}
    if message.fields_json:
        try:
            fields = json.loads(message.fields_json)
        except ValueError:
            raise InvalidArgument("fields must be a JSON object") from None
    return ItemInput(
        project=message.project if message.HasField("project") else None,
        item_type=message.item_type if message.HasField("item_type") else None,
        child_item_type=message.child_item_type if message.HasField("child_item_type") else None,
        parent_item=message.parent_item if message.HasField("parent_item") else None,
        parent_project=message.parent_project if message.HasField("parent_project") else None,
        global_id=message.global_id if message.HasField("global_id") else None,
        set_global_id_manually=message.set_global_id_manually,
        fields=fields,
    )


class ItemServicer:
    """The items half of the servicer (mixed in)."""

    items: Items
    config: Configuration

    async def _messages(self, rows: list[Any], dates_with_time: bool) -> list[pb.Item]:
        catalog = await self.config.catalog()
        principal = current_principal()
        caller = principal.user_id if principal else 0
        return [item_message(r, catalog, dates_with_time, caller) for r in rows]

    async def ListItems(self, request: pb.ListItemsRequest, context: Ctx) -> pb.ItemPage:
        start, size = page_of(request.page)
        parent = request.parent if request.HasField("parent") else None
        rows, total = await self.items.page(request.project, request.root_only, parent, start, size)
        info = core_pb2.PageInfo(start_index=start, result_count=len(rows), total_results=total)
        return pb.ItemPage(
            items=await self._messages(rows, request.dates_with_time), page_info=info
        )

    async def GetItems(self, request: pb.GetItemsRequest, context: Ctx) -> pb.ItemList:
        rows = await self.items.get_many(list(request.ids))
        return pb.ItemList(items=await self._messages(rows, request.dates_with_time))

    async def CreateItem(self, request: pb.ItemInput, context: Ctx) -> core_pb2.Created:
        return core_pb2.Created(id=await self.items.create(item_input(request)))

    async def CreateItems(self, request: pb.ItemInputList, context: Ctx) -> core_pb2.IdList:
        ids = await self.items.create_many([item_input(m) for m in request.items])
        return core_pb2.IdList(ids=ids)

    async def UpdateItem(self, request: pb.UpdateItemRequest, context: Ctx) -> core_pb2.Empty:
        await self.items.update(request.id, item_input(request.item))
        return core_pb2.Empty()

    async def PatchItem(self, request: pb.PatchItemRequest, context: Ctx) -> core_pb2.Empty:
        try:
            operations = json.loads(request.operations_json)
        except ValueError:
            raise InvalidArgument("The body must be a JSON array of patch operations.") from None
        await self.items.patch(request.id, operations, request.set_global_id_manually)
        return core_pb2.Empty()

    async def SearchItems(self, request: pb.SearchItemsRequest, context: Ctx) -> pb.ItemPage:
        start, size = page_of(request.page)

        def bound(text: str) -> Any:
            return parse_iso(text) if text else None

        query = Search(
            projects=list(request.projects),
            item_types=list(request.item_types),
            document_keys=list(request.document_keys),
            releases=list(request.releases),
            ranges={
                "created": (bound(request.created_from), bound(request.created_to)),
                "modified": (bound(request.modified_from), bound(request.modified_to)),
                "lastActivity": (
                    bound(request.last_activity_from),
                    bound(request.last_activity_to),
                ),
            },
            contains=list(request.contains),
            sort_field=request.sort_field or "sequence",
            descending=request.sort_descending,
        )
        rows, total = await search(self.items.db, query, start, size)
        info = core_pb2.PageInfo(start_index=start, result_count=len(rows), total_results=total)
        return pb.ItemPage(
            items=await self._messages(rows, request.dates_with_time), page_info=info
        )

    async def PatchItems(self, request: pb.PatchItemsRequest, context: Ctx) -> pb.PatchItemsReply:
        results = []
        for patch in request.patches:
            try:
                await self.PatchItem(patch, context)
                results.append(pb.PatchResult(id=patch.id, status=200, message="OK"))
            except PlumblineError as exc:
                results.append(
                    pb.PatchResult(id=patch.id, status=exc.http_status, message=exc.message)
                )
        return pb.PatchItemsReply(results=results)

    async def DeleteItem(self, request: core_pb2.Id, context: Ctx) -> core_pb2.Empty:
        await self.items.delete(request.id)
        return core_pb2.Empty()


def relationship_message(row: Any) -> pb.Relationship:
    """A relationships row as a message."""
    return pb.Relationship(
        id=row.id,
        from_item=row.from_item,
        to_item=row.to_item,
        relationship_type=row.relationship_type,
        suspect=row.suspect,
    )


class RelationshipServicer:
    """The relationships part of the servicer (mixed in)."""

    relationships: Relationships
    items: Items

    async def ListRelationships(
        self, request: pb.ListRelationshipsRequest, context: Ctx
    ) -> pb.RelationshipPage:
        start, size = page_of(request.page)
        rows, total = await self.relationships.page(
            request.project if request.HasField("project") else None,
            request.item if request.HasField("item") else None,
            request.upstream,
            start,
            size,
            request.last_id if request.HasField("last_id") else None,
            request.omit_count,
        )
        info = core_pb2.PageInfo(start_index=start, result_count=len(rows), total_results=total)
        return pb.RelationshipPage(
            relationships=[relationship_message(r) for r in rows], page_info=info
        )

    async def GetRelationships(self, request: core_pb2.IdList, context: Ctx) -> pb.RelationshipList:
        rows = await self.relationships.get_many(list(request.ids))
        return pb.RelationshipList(relationships=[relationship_message(r) for r in rows])

    async def CreateRelationship(
        self, request: pb.RelationshipInput, context: Ctx
    ) -> core_pb2.Created:
        rel_type = request.relationship_type if request.HasField("relationship_type") else None
        new_id = await self.relationships.create(request.from_item, request.to_item, rel_type)
        return core_pb2.Created(id=new_id)

    async def CreateRelationships(
        self, request: pb.RelationshipInputList, context: Ctx
    ) -> core_pb2.IdList:
        ids = await self.relationships.create_many(
            [
                (
                    m.from_item,
                    m.to_item,
                    m.relationship_type if m.HasField("relationship_type") else None,
                )
                for m in request.relationships
            ]
        )
        return core_pb2.IdList(ids=ids)

    async def UpdateRelationship(
        self, request: pb.RelationshipInput, context: Ctx
    ) -> core_pb2.Empty:
        rel_type = request.relationship_type if request.HasField("relationship_type") else None
        await self.relationships.update(request.id, request.from_item, request.to_item, rel_type)
        return core_pb2.Empty()

    async def DeleteRelationship(self, request: core_pb2.Id, context: Ctx) -> core_pb2.Empty:
        await self.relationships.delete(request.id)
        return core_pb2.Empty()

    async def ClearSuspect(self, request: core_pb2.Id, context: Ctx) -> core_pb2.Empty:
        await self.relationships.clear_suspect(request.id)
        return core_pb2.Empty()

    async def ListRelatedItems(
        self, request: pb.ListRelationshipsRequest, context: Ctx
    ) -> pb.ItemPage:
        start, size = page_of(request.page)
        ids, total = await self.relationships.related_ids(
            request.item, request.upstream, start, size
        )
        rows = await self.items.get_many(ids) if ids else []
        items = await ItemServicer._messages(self, rows, request.dates_with_time)  # type: ignore[arg-type]
        info = core_pb2.PageInfo(start_index=start, result_count=len(items), total_results=total)
        return pb.ItemPage(items=items, page_info=info)


class ItemsServicer(
    ConfigServicer,
    ItemServicer,
    RelationshipServicer,
    CollaborationServicer,
    items_pb2_grpc.ItemsServicer,
):
    """Thin mapping onto projects, configuration and the id space."""

    def __init__(
        self,
        projects: Projects,
        ids: IdSpace,
        config: Configuration,
        items: Items,
        relationships: Relationships,
        tags: Tags,
        releases: Releases,
        comments: Comments,
    ) -> None:
        self.projects = projects
        self.ids = ids
        self.config = config
        self.items = items
        self.relationships = relationships
        self.tags = tags
        self.releases = releases
        self.comments = comments
        self.sync = Sync(items, config)
        self.links = Links(items)
        self.filters = Filters(items.db)
        self.moves = Moves(items)
        self.categories = Categories(items.db)

    async def ListProjects(self, request: pb.ListProjectsRequest, context: Ctx) -> pb.ProjectPage:
        start, size = page_of(request.page)
        rows, total = await self.projects.page(start, size)
        info = core_pb2.PageInfo(start_index=start, result_count=len(rows), total_results=total)
        return pb.ProjectPage(projects=[project_message(r) for r in rows], page_info=info)

    async def GetProjects(self, request: core_pb2.IdList, context: Ctx) -> pb.ProjectList:
        rows = await self.projects.get_many(list(request.ids))
        return pb.ProjectList(projects=[project_message(r) for r in rows])

    async def CreateProject(self, request: pb.ProjectInput, context: Ctx) -> core_pb2.Created:
        return core_pb2.Created(id=await self.projects.create(_input(request)))

    async def UpdateProject(self, request: pb.UpdateProjectRequest, context: Ctx) -> core_pb2.Empty:
        await self.projects.update(request.id, _input(request.project))
        return core_pb2.Empty()

    async def AllocateIdBlock(self, request: pb.AllocateIdBlockRequest, context: Ctx) -> pb.IdBlock:
        first, size = await self.ids.allocate(request.owner)
        return pb.IdBlock(first_id=first, size=size, owner=request.owner)

    async def GetIdOwner(self, request: core_pb2.Id, context: Ctx) -> pb.IdOwner:
        return pb.IdOwner(owner=await self.ids.owner_of(request.id))

    async def GetWatermark(self, request: core_pb2.Empty, context: Ctx) -> core_pb2.Watermark:
        return core_pb2.Watermark(source="items", position=await self.projects.outbox.watermark())
