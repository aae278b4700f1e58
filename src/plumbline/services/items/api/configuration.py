"""``plumbline.items.v1.Configuration``: catalog records as messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.access import AccessCache
from plumbline.common.catalog import ItemType, Option, PickList, RelationshipType, RuleSet
from plumbline.common.db import check_batch
from plumbline.common.errors import NotFound
from plumbline.common.rpc import Context, message_of, page_info, page_of
from plumbline.services.items.config import Configuration
from plumbline.services.items.configdoc import FieldDoc

T = TypeVar("T")


def item_type_message(item_type: ItemType) -> pb.ItemType:
    """An item type with its fields."""
    # A field's ``item_type`` is the item type it refers to (its own is the owner's).
    fields = [
        message_of(f, pb.ItemTypeField, item_type=f.ref_item_type, text_type=f.text_type or None)
        for f in item_type.fields
    ]
    return message_of(item_type, pb.ItemType, fields=fields)


def pick_list_message(pick_list: PickList) -> pb.PickList:
    """A pick list."""
    return message_of(pick_list, pb.PickList)


def option_message(option: Option) -> pb.PickListOption:
    """A pick list option."""
    return message_of(option, pb.PickListOption)


def relationship_type_message(rel: RelationshipType) -> pb.RelationshipType:
    """A relationship type."""
    return message_of(rel, pb.RelationshipType)


def rule_set_message(rule_set: RuleSet, visible: frozenset[int] | None = None) -> pb.RuleSet:
    """A relationship rule set; of the projects that use it, those in ``visible`` (the
    caller's readable projects; ``None``: all)."""
    return message_of(
        rule_set,
        pb.RuleSet,
        projects=[p for p in rule_set.projects if visible is None or p in visible],
    )


def _page(rows: Sequence[T], page: core_pb2.Page) -> tuple[list[T], core_pb2.PageInfo]:
    start, size = page_of(page)
    chunk = list(rows[start : start + size])
    return chunk, page_info(start, len(chunk), len(rows))


def _pick(found: dict[int, T], ids: Sequence[int], what: str) -> list[T]:
    picked = [found[i] for i in sorted(set(ids)) if i in found]
    check_batch(picked, ids, what)
    return picked


def _option_values(message: pb.PickListOptionInput) -> dict[str, Any]:
    return {
        name: getattr(message, name)
        for name in ("name", "description", "value", "color", "sort_order", "default", "active")
        if message.HasField(name)
    }


class ConfigurationServicer(items_pb2_grpc.ConfigurationServicer):
    """Thin mapping onto ``Configuration``."""

    def __init__(self, config: Configuration, access: AccessCache) -> None:
        self.config = config
        self.access = access

    async def ListItemTypes(
        self, request: pb.ListItemTypesRequest, context: Context
    ) -> pb.ItemTypePage:
        catalog = await self.config.catalog()
        rows, info = _page(sorted(catalog.item_types.values(), key=lambda t: t.id), request.page)
        return pb.ItemTypePage(item_types=[item_type_message(t) for t in rows], page_info=info)

    async def GetItemTypes(self, request: core_pb2.IdList, context: Context) -> pb.ItemTypeList:
        catalog = await self.config.catalog()
        types = _pick(catalog.item_types, list(request.ids), "item type")
        return pb.ItemTypeList(item_types=[item_type_message(t) for t in types])

    async def AddItemTypeField(
        self, request: pb.AddFieldRequest, context: Context
    ) -> core_pb2.Created:
        f = request.field
        pick_list_name = None
        if f.HasField("pick_list"):
            catalog = await self.config.catalog()
            pick_list = catalog.pick_lists.get(f.pick_list)
            if pick_list is None:
                raise NotFound(f"No pick list with id {f.pick_list}.")
            pick_list_name = pick_list.name
        # The gateway validated the shape; add_field checks the rules.
        doc = FieldDoc.model_construct(
            name=f.name,
            label=f.label,
            fieldType=f.field_type,
            readOnly=f.read_only,
            required=f.required,
            triggerSuspect=f.trigger_suspect,
            synchronize=f.synchronize,
            textType=f.text_type,
            pickList=pick_list_name,
            itemType=None,
            custom=True,
        )
        new_id = await self.config.add_field(request.item_type, doc, list(request.pick_list_values))
        return core_pb2.Created(id=new_id)

    async def UpdateItemTypeField(
        self, request: pb.UpdateFieldRequest, context: Context
    ) -> core_pb2.Empty:
        values: dict[str, Any] = {}
        if request.HasField("label"):
            values["label"] = request.label
        if request.HasField("required"):
            values["required"] = request.required
        if request.HasField("read_only"):
            values["readOnly"] = request.read_only
        if request.HasField("trigger_suspect"):
            values["triggerSuspect"] = request.trigger_suspect
        if request.HasField("synchronize"):
            values["synchronize"] = request.synchronize
        await self.config.update_field(request.item_type, request.field, values)
        return core_pb2.Empty()

    async def DeleteItemTypeField(self, request: pb.FieldRef, context: Context) -> core_pb2.Empty:
        await self.config.delete_field(request.item_type, request.field)
        return core_pb2.Empty()

    async def ListPickLists(self, request: core_pb2.Page, context: Context) -> pb.PickListPage:
        catalog = await self.config.catalog()
        rows, info = _page(sorted(catalog.pick_lists.values(), key=lambda p: p.id), request)
        return pb.PickListPage(pick_lists=[pick_list_message(p) for p in rows], page_info=info)

    async def GetPickLists(self, request: core_pb2.IdList, context: Context) -> pb.PickListList:
        catalog = await self.config.catalog()
        lists = _pick(catalog.pick_lists, list(request.ids), "pick list")
        return pb.PickListList(pick_lists=[pick_list_message(p) for p in lists])

    async def ListPickListOptions(
        self, request: pb.ListOptionsRequest, context: Context
    ) -> pb.PickListOptionPage:
        catalog = await self.config.catalog()
        if request.pick_list not in catalog.pick_lists:
            raise NotFound(f"No pick list with id {request.pick_list}.")
        rows, info = _page(catalog.options_of(request.pick_list), request.page)
        return pb.PickListOptionPage(options=[option_message(o) for o in rows], page_info=info)

    async def GetPickListOptions(
        self, request: core_pb2.IdList, context: Context
    ) -> pb.PickListOptionList:
        catalog = await self.config.catalog()
        options = _pick(catalog.options, list(request.ids), "pick list option")
        return pb.PickListOptionList(options=[option_message(o) for o in options])

    async def CreatePickListOption(
        self, request: pb.PickListOptionInput, context: Context
    ) -> core_pb2.Created:
        return core_pb2.Created(
            id=await self.config.create_option(request.id, _option_values(request))
        )

    async def UpdatePickListOption(
        self, request: pb.PickListOptionInput, context: Context
    ) -> core_pb2.Empty:
        await self.config.update_option(request.id, _option_values(request))
        return core_pb2.Empty()

    async def ListRelationshipTypes(
        self, request: core_pb2.Page, context: Context
    ) -> pb.RelationshipTypePage:
        catalog = await self.config.catalog()
        rows, info = _page(sorted(catalog.relationship_types.values(), key=lambda r: r.id), request)
        return pb.RelationshipTypePage(
            relationship_types=[relationship_type_message(r) for r in rows], page_info=info
        )

    async def GetRelationshipTypes(
        self, request: core_pb2.IdList, context: Context
    ) -> pb.RelationshipTypeList:
        catalog = await self.config.catalog()
        types = _pick(catalog.relationship_types, list(request.ids), "relationship type")
        return pb.RelationshipTypeList(
            relationship_types=[relationship_type_message(r) for r in types]
        )

    async def ListRuleSets(self, request: core_pb2.Page, context: Context) -> pb.RuleSetPage:
        catalog = await self.config.catalog()
        start, size = page_of(request)
        sets = sorted(catalog.rule_sets.values(), key=lambda r: r.id)
        chunk = sets[start : start + size]
        visible = (await self.access.current()).readable()
        return pb.RuleSetPage(
            rule_sets=[rule_set_message(r, visible) for r in chunk],
            page_info=page_info(start, len(chunk), len(sets)),
        )

    async def GetRuleSets(self, request: core_pb2.IdList, context: Context) -> pb.RuleSetList:
        catalog = await self.config.catalog()
        ids = list(request.ids)
        found = [catalog.rule_sets[i] for i in ids if i in catalog.rule_sets]
        check_batch(found, ids, "relationship rule set")
        visible = (await self.access.current()).readable()
        return pb.RuleSetList(rule_sets=[rule_set_message(r, visible) for r in found])
