"""Tags, releases, comments and locks in items' gRPC servicer (mixed in)."""

from __future__ import annotations

import json
from typing import Any

from plumbline.common.dates import format_datetime
from plumbline.common.errors import InvalidArgument, NotFound
from plumbline.common.rpc import page_of
from plumbline.core.v1 import core_pb2
from plumbline.items.v1 import items_pb2 as pb
from plumbline.services.items.categories import Categories
from plumbline.services.items.comments import Comments
from plumbline.services.items.config import Configuration, RuleSet
from plumbline.services.items.filters import Filters
from plumbline.services.items.items import Items
from plumbline.services.items.links import Links
from plumbline.services.items.moves import Moves
from plumbline.services.items.releases import Releases
from plumbline.services.items.sync import Sync
from plumbline.services.items.tags import Tags


def tag_message(row: Any) -> pb.Tag:
    """A tags row as a message."""
    return pb.Tag(id=row.id, name=row.name, project=row.project)


def release_message(row: Any) -> pb.Release:
    """A releases row (with its item count) as a message."""
    return pb.Release(
        id=row.id,
        name=row.name,
        description=row.description,
        project=row.project,
        release_date=format_datetime(row.release_date) if row.release_date else "",
        active=row.active,
        archived=row.archived,
        item_count=row.item_count,
    )


def comment_message(row: Any) -> pb.Comment:
    """A comments row as a message."""
    message = pb.Comment(
        id=row.id,
        created_date=format_datetime(row.created_at),
        created_by=row.created_by,
        modified_by=row.modified_by,
        deleted=row.deleted,
        status=row.status,
        text=row.text,
        comment_type=row.comment_type,
    )
    for name in ("in_reply_to", "item", "project"):
        value = getattr(row, name)
        if value is not None:
            setattr(message, name, value)
    return message


def rule_set_message(rule_set: RuleSet) -> pb.RuleSet:
    """A relationship rule set."""
    return pb.RuleSet(
        id=rule_set.id,
        name=rule_set.name,
        description=rule_set.description,
        rules=[
            pb.Rule(
                relationship_type=r.relationship_type,
                from_item_type=r.from_item_type,
                to_item_type=r.to_item_type,
            )
            for r in rule_set.rules
        ],
        projects=list(rule_set.projects),
    )


def filter_message(row: Any) -> pb.Filter:
    """A filters row as a message."""
    message = pb.Filter(
        id=row.id,
        name=row.name,
        author=row.author,
        project_scope=row.project_scope,
        filter_query_json=row.filter_query.encode(),
        public=row.public,
    )
    if row.specified_project is not None:
        message.specified_project = row.specified_project
    return message


def _info(start: int, count: int, total: int) -> core_pb2.PageInfo:
    return core_pb2.PageInfo(start_index=start, result_count=count, total_results=total)


class CollaborationServicer:
    """Tags, releases, comments, locks, synchronized items, workflows."""

    items: Items
    tags: Tags
    releases: Releases
    comments: Comments
    sync: Sync

    links: Links
    config: Configuration
    filters: Filters
    moves: Moves
    categories: Categories

    async def ListFilters(self, request: pb.ListFiltersRequest, context: Any) -> pb.FilterPage:
        start, size = page_of(request.page)
        rows, total = await self.filters.page(
            request.project if request.HasField("project") else None,
            request.author if request.HasField("author") else None,
            request.favorites_only,
            start,
            size,
        )
        return pb.FilterPage(
            filters=[filter_message(r) for r in rows], page_info=_info(start, len(rows), total)
        )

    async def GetFilters(self, request: core_pb2.IdList, context: Any) -> pb.FilterList:
        rows = await self.filters.get_many(list(request.ids))
        return pb.FilterList(filters=[filter_message(r) for r in rows])

    async def CreateFilter(self, request: pb.Filter, context: Any) -> core_pb2.Created:
        try:
            query = json.loads(request.filter_query_json or b"{}")
        except ValueError:
            raise InvalidArgument("filterQuery must be a JSON object.") from None
        new_id = await self.filters.create(
            request.name,
            request.project_scope,
            request.specified_project if request.HasField("specified_project") else None,
            query,
            request.public,
        )
        return core_pb2.Created(id=new_id)

    async def FilterResults(self, request: pb.FilterResultsRequest, context: Any) -> pb.ItemPage:
        start, size = page_of(request.page)
        project = request.project if request.HasField("project") else None
        ids, total = await self.filters.results(
            request.filter, project, start, 0 if request.count_only else size
        )
        rows = await self.items.get_many(ids) if ids else []
        messages = await self._messages(rows, request.dates_with_time)  # type: ignore[attr-defined]
        return pb.ItemPage(items=messages, page_info=_info(start, len(messages), total))

    async def MoveItemToProject(self, request: pb.MoveRequest, context: Any) -> pb.MoveReply:
        work_id, moved = await self.moves.to_project(request.item, request.project)
        return pb.MoveReply(work_id=work_id, moved=moved)

    async def PlaceItem(self, request: pb.PlaceItemRequest, context: Any) -> core_pb2.Empty:
        await self.items.place(
            request.item,
            request.parent_item if request.HasField("parent_item") else None,
            request.parent_project if request.HasField("parent_project") else None,
            request.peer if request.HasField("peer") else None,
        )
        return core_pb2.Empty()

    async def ListCategories(
        self, request: pb.ListCategoriesRequest, context: Any
    ) -> pb.CategoryPage:
        start, size = page_of(request.page)
        item = request.item if request.HasField("item") else None
        records, total = await self.categories.page(item, start, size)
        messages = []
        for record in records:
            message = pb.Category(
                id=record["id"], name=record["name"], path=record["path"], visible=record["visible"]
            )
            if record["parent"] is not None:
                message.parent = record["parent"]
            messages.append(message)
        return pb.CategoryPage(categories=messages, page_info=_info(start, len(messages), total))

    async def CreateCategory(self, request: pb.CategoryInput, context: Any) -> core_pb2.Created:
        parent = request.parent if request.HasField("parent") else None
        return core_pb2.Created(id=await self.categories.create(request.name, parent))

    async def SetCategoryVisibility(
        self, request: pb.CategoryInput, context: Any
    ) -> core_pb2.Empty:
        await self.categories.set_visible(request.id, request.visible)
        return core_pb2.Empty()

    async def ChangeItemCategories(
        self, request: pb.ItemCategoriesRequest, context: Any
    ) -> core_pb2.Empty:
        await self.categories.change_item(request.item, list(request.add), list(request.remove))
        return core_pb2.Empty()

    async def AddFavoriteFilter(self, request: core_pb2.Id, context: Any) -> core_pb2.Empty:
        await self.filters.favorite(request.id)
        return core_pb2.Empty()

    async def ListRuleSets(self, request: core_pb2.Page, context: Any) -> pb.RuleSetPage:
        catalog = await self.config.catalog()
        start, size = page_of(request)
        sets = sorted(catalog.rule_sets.values(), key=lambda r: r.id)
        chunk = sets[start : start + size]
        return pb.RuleSetPage(
            rule_sets=[rule_set_message(r) for r in chunk],
            page_info=_info(start, len(chunk), len(sets)),
        )

    async def GetRuleSets(self, request: core_pb2.IdList, context: Any) -> pb.RuleSetList:
        catalog = await self.config.catalog()
        ids = list(request.ids)
        if len(ids) == 1 and ids[0] not in catalog.rule_sets:
            raise NotFound(f"No relationship rule set with id {ids[0]}.")
        return pb.RuleSetList(
            rule_sets=[
                rule_set_message(catalog.rule_sets[i]) for i in ids if i in catalog.rule_sets
            ]
        )

    async def ListLinks(self, request: pb.ListLinksRequest, context: Any) -> pb.LinkPage:
        start, size = page_of(request.page)
        link = request.link if request.HasField("link") else None
        rows, total = await self.links.page(request.item, link, start, size)
        return pb.LinkPage(
            links=[
                pb.Link(id=r.id, item=r.item, url=r.url, description=r.description) for r in rows
            ],
            page_info=_info(start, len(rows), total),
        )

    async def CreateLink(self, request: pb.LinkInput, context: Any) -> core_pb2.Created:
        return core_pb2.Created(
            id=await self.links.create(request.item, request.url, request.description)
        )

    async def UpdateLink(self, request: pb.LinkInput, context: Any) -> core_pb2.Empty:
        await self.links.update(request.item, request.link, request.url, request.description)
        return core_pb2.Empty()

    async def DeleteLink(self, request: pb.LinkInput, context: Any) -> core_pb2.Empty:
        await self.links.delete(request.item, request.link)
        return core_pb2.Empty()

    async def DuplicateItem(self, request: pb.DuplicateRequest, context: Any) -> core_pb2.Created:
        new_id = await self.links.duplicate(
            request.item, request.include_tags, request.include_links
        )
        return core_pb2.Created(id=new_id)

    async def ListSyncedItems(self, request: pb.ListItemsRequest, context: Any) -> pb.ItemPage:
        start, size = page_of(request.page)
        rows, total = await self.sync.pool(request.parent, start, size)
        messages = await self._messages(rows, request.dates_with_time)  # type: ignore[attr-defined]
        return pb.ItemPage(items=messages, page_info=_info(start, len(messages), total))

    async def AddSyncedItem(self, request: pb.ItemPair, context: Any) -> core_pb2.Empty:
        await self.sync.add(request.item, request.other)
        return core_pb2.Empty()

    async def RemoveSyncedItem(self, request: pb.ItemPair, context: Any) -> core_pb2.Empty:
        await self.sync.remove(request.item, request.other)
        return core_pb2.Empty()

    async def GetSyncStatus(self, request: pb.ItemPair, context: Any) -> pb.SyncStatus:
        state = await self.sync.status(request.item, request.other)
        return pb.SyncStatus(
            in_sync=state.in_sync,
            has_collection=state.has_collection,
            total_children=state.total_children,
            total_missing=state.total_missing,
            total_out_of_sync=state.total_out_of_sync,
        )

    async def ListTransitionOptions(self, request: core_pb2.Id, context: Any) -> pb.TransitionList:
        steps = await self.sync.options(request.id)
        return pb.TransitionList(
            transitions=[
                pb.WorkflowTransition(id=str(t.id), action=t.action, new_status=t.to_option)
                for t in steps
            ]
        )

    async def Transition(self, request: pb.TransitionRequest, context: Any) -> core_pb2.Empty:
        await self.sync.transition(request.item, request.transition_id, request.comment)
        return core_pb2.Empty()

    async def SetLock(self, request: pb.SetLockRequest, context: Any) -> core_pb2.Empty:
        await self.items.set_lock(request.item, request.locked)
        return core_pb2.Empty()

    async def ListTags(self, request: pb.ListTagsRequest, context: Any) -> pb.TagPage:
        start, size = page_of(request.page)
        rows, total = await self.tags.page(
            request.project if request.HasField("project") else None,
            request.item if request.HasField("item") else None,
            start,
            size,
        )
        return pb.TagPage(
            tags=[tag_message(r) for r in rows], page_info=_info(start, len(rows), total)
        )

    async def GetTags(self, request: core_pb2.IdList, context: Any) -> pb.TagList:
        return pb.TagList(
            tags=[tag_message(r) for r in await self.tags.get_many(list(request.ids))]
        )

    async def CreateTag(self, request: pb.TagInput, context: Any) -> core_pb2.Created:
        return core_pb2.Created(id=await self.tags.create(request.name, request.project))

    async def UpdateTag(self, request: pb.TagInput, context: Any) -> core_pb2.Empty:
        await self.tags.update(request.id, request.name)
        return core_pb2.Empty()

    async def DeleteTag(self, request: core_pb2.Id, context: Any) -> core_pb2.Empty:
        await self.tags.delete(request.id)
        return core_pb2.Empty()

    async def TagItem(self, request: pb.ItemTag, context: Any) -> core_pb2.Empty:
        await self.tags.tag_item(request.item, request.tag)
        return core_pb2.Empty()

    async def UntagItem(self, request: pb.ItemTag, context: Any) -> core_pb2.Empty:
        await self.tags.untag_item(request.item, request.tag)
        return core_pb2.Empty()

    async def ListTaggedItems(
        self, request: pb.ListTaggedItemsRequest, context: Any
    ) -> pb.ItemPage:
        start, size = page_of(request.page)
        ids, total = await self.tags.tagged_item_ids(request.tag, start, size)
        rows = await self.items.get_many(ids) if ids else []
        messages = await self._messages(rows, request.dates_with_time)  # type: ignore[attr-defined]
        return pb.ItemPage(items=messages, page_info=_info(start, len(messages), total))

    async def ListReleases(self, request: pb.ListReleasesRequest, context: Any) -> pb.ReleasePage:
        start, size = page_of(request.page)
        rows, total = await self.releases.page(request.project, start, size)
        return pb.ReleasePage(
            releases=[release_message(r) for r in rows], page_info=_info(start, len(rows), total)
        )

    async def GetReleases(self, request: core_pb2.IdList, context: Any) -> pb.ReleaseList:
        rows = await self.releases.get_many(list(request.ids))
        return pb.ReleaseList(releases=[release_message(r) for r in rows])

    async def CreateRelease(self, request: pb.ReleaseInput, context: Any) -> core_pb2.Created:
        new_id = await self.releases.create(
            request.name,
            request.description,
            request.release_date if request.HasField("release_date") else None,
            request.project,
        )
        return core_pb2.Created(id=new_id)

    async def UpdateRelease(self, request: pb.ReleaseInput, context: Any) -> core_pb2.Empty:
        values: dict[str, Any] = {
            name: getattr(request, name)
            for name in ("name", "description", "release_date", "project")
            if request.HasField(name)
        }
        values["clear_release_date"] = request.clear_release_date
        await self.releases.update(request.id, values)
        return core_pb2.Empty()

    async def ListComments(self, request: pb.ListCommentsRequest, context: Any) -> pb.CommentPage:
        start, size = page_of(request.page)
        rows, total = await self.comments.page(
            request.item if request.HasField("item") else None,
            request.in_reply_to if request.HasField("in_reply_to") else None,
            request.root_only,
            start,
            size,
        )
        return pb.CommentPage(
            comments=[comment_message(r) for r in rows], page_info=_info(start, len(rows), total)
        )

    async def GetComments(self, request: core_pb2.IdList, context: Any) -> pb.CommentList:
        rows = await self.comments.get_many(list(request.ids))
        return pb.CommentList(comments=[comment_message(r) for r in rows])

    async def CreateComment(self, request: pb.CommentInput, context: Any) -> core_pb2.Created:
        new_id = await self.comments.create(
            request.text,
            request.comment_type,
            request.item if request.HasField("item") else None,
            request.project if request.HasField("project") else None,
            request.in_reply_to if request.HasField("in_reply_to") else None,
        )
        return core_pb2.Created(id=new_id)
