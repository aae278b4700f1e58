"""Item types, pick lists, relationship types and workflows: applying changes to them.

Configuration is small and read on every item write, so readers get an immutable
``Catalog`` snapshot, reloaded when it is older than ``TTL`` seconds or after a change
made through this process (changes from ``plumbline config apply`` show within the TTL).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbline.common.catalog import Catalog, Field, ItemType
from plumbline.common.context import require_admin
from plumbline.common.db import Database, insert_id
from plumbline.common.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound
from plumbline.common.fields import (
    FIELD_NAME,
    MAX_FIELD_NAME,
    RECORD_MEMBERS,
    SYSTEM_FIELDS,
    default_option,
    list_default,
)
from plumbline.services.items.catalog import load_catalog
from plumbline.services.items.configdoc import (
    ConfigDoc,
    FieldDoc,
    ItemTypeDoc,
    PickListDoc,
    RuleSetDoc,
)
from plumbline.services.items.models import (
    item_type_fields,
    item_types,
    pick_list_options,
    pick_lists,
    projects,
    relationship_types,
    rule_set_projects,
    rule_set_rules,
    rule_sets,
    workflow_transitions,
)

TTL = 2.0

#: The descriptions of the system fields (``fields.SYSTEM_FIELDS``) every item type has.
SYSTEM_FIELD_DOCS = (
    FieldDoc(
        name="documentKey", label="Unique ID", fieldType="STRING", readOnly=True, textType="KEY"
    ),
    FieldDoc(name="globalId", label="Global ID", fieldType="STRING", readOnly=True, required=True),
)

#: The categories of the item types whose records only the system creates (test runs are
#: generated from test cases): no request sets a new record's fields.
GENERATED = ("TEST_RUN",)
#: The members of a custom field ``PATCH /itemtypes/{id}/fields/{fieldId}`` may change,
#: as the request names them, with their columns.
CHANGEABLE = {
    "label": "label",
    "required": "required",
    "readOnly": "read_only",
    "triggerSuspect": "trigger_suspect",
    "synchronize": "synchronize",
}


def system_field_names(catalog: Catalog) -> list[str]:
    """The names a custom field must not take: the system fields, the fields of the
    configuration that are not custom (no ``$<typeId>``) and the members test records
    show among their fields."""
    names = {*SYSTEM_FIELDS, *RECORD_MEMBERS}
    for item_type in catalog.item_types.values():
        names.update(f.name for f in item_type.fields if "$" not in f.name)
    return sorted(names, key=str.lower)


def check_field_name(catalog: Catalog, name: str) -> None:
    """A new custom field's name (before ``$<typeId>``): an identifier of at most
    ``MAX_FIELD_NAME`` characters that does not shadow a system field."""
    if len(name) > MAX_FIELD_NAME:
        raise InvalidArgument(f"name must be at most {MAX_FIELD_NAME} characters, got {len(name)}.")
    if not FIELD_NAME.match(name):
        raise InvalidArgument(
            f"name {name!r} must be a letter followed by letters, digits and _ "
            "(the field is stored as name$<typeId>)."
        )
    reserved = system_field_names(catalog)
    clash = next((r for r in reserved if r.lower() == name.lower()), None)
    if clash is not None:
        raise InvalidArgument(
            f"name {name!r} is the name of the system field {clash}: a custom field "
            f"({name}$<typeId>) would shadow it for clients that read names without "
            f"their suffix. Names taken by system fields (in any case): {', '.join(reserved)}."
        )


def check_required(item_type: ItemType, required: bool, read_only: bool, default: bool) -> None:
    """A required field on a type whose records the system creates, refused unless it
    has a ``default`` (a LOOKUP whose pick list has a default option) or is read-only
    (the API never sets a read-only field, so it never asks for one)."""
    if not required or read_only:
        return
    label = f"{item_type.type_key} ({item_type.display})"
    if item_type.category in GENERATED:
        raise InvalidArgument(
            f"required: {label} takes no required field: the system creates every "
            "record of this type itself and no request sets a new one's fields. "
            "Send required false (or readOnly true)."
        )
    if item_type.system and not default:
        raise InvalidArgument(
            f"required: {label} is a built-in item type whose records the system and "
            "clients of the contract create with the contract's fields only, so a "
            "required field of it needs a default: allowed is a LOOKUP field whose pick "
            "list has a default option (pickListValues makes the first one the default). "
            "Send required false, or such a LOOKUP field."
        )


class Configuration:
    """Applies configuration documents and serves snapshots."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._catalog: Catalog | None = None
        self._loaded_at = 0.0
        self._lock = asyncio.Lock()

    async def catalog(self) -> Catalog:
        """The current snapshot."""
        if self._catalog is None or time.monotonic() - self._loaded_at > TTL:
            async with self._lock:
                if self._catalog is None or time.monotonic() - self._loaded_at > TTL:
                    self._catalog = await load_catalog(self.db)
                    self._loaded_at = time.monotonic()
        return self._catalog

    def invalidate(self) -> None:
        """Forces the next read to reload."""
        self._catalog = None

    # -- applying a document ---------------------------------------------------------

    async def is_empty(self) -> bool:
        """Whether no item type exists yet (a fresh install)."""
        async with self.db.read() as session:
            return (await session.scalar(select(item_types.c.id).limit(1))) is None

    async def apply(self, doc: ConfigDoc, dry_run: bool = False) -> list[str]:
        """Makes the stored configuration match ``doc``; returns what changed.

        Nothing is ever deleted: fields, options and types missing from the document stay.
        """
        changes: list[str] = []
        async with self.db.sessions() as session:
            transaction = await session.begin()
            try:
                list_ids: dict[str, int] = {}
                for pick_list in doc.pickLists:
                    list_ids[pick_list.name] = await self._apply_pick_list(
                        session, pick_list, changes
                    )
                for row in (
                    await session.execute(select(pick_lists.c.id, pick_lists.c.name))
                ).all():
                    list_ids.setdefault(row.name, row.id)
                await self._apply_relationship_types(session, doc, changes)
                for item_type in doc.itemTypes:
                    await self._apply_item_type(session, item_type, list_ids, changes)
                for rule_set in doc.relationshipRuleSets:
                    await self._apply_rule_set(session, rule_set, changes)
                if dry_run:
                    await transaction.rollback()
                else:
                    await transaction.commit()
            except BaseException:
                if transaction.is_active:
                    await transaction.rollback()
                raise
        self.invalidate()
        return changes

    async def _apply_pick_list(
        self, session: AsyncSession, doc: PickListDoc, changes: list[str]
    ) -> int:
        row = (
            await session.execute(select(pick_lists).where(pick_lists.c.name == doc.name))
        ).first()
        if row is None:
            list_id = await insert_id(
                session,
                pick_lists.insert().values(
                    name=doc.name, description=doc.description, kind=doc.kind
                ),
            )
            changes.append(f"created pick list {doc.name!r}")
        else:
            list_id = row.id
            if (row.description, row.kind) != (doc.description, doc.kind):
                await session.execute(
                    update(pick_lists)
                    .where(pick_lists.c.id == list_id)
                    .values(description=doc.description, kind=doc.kind)
                )
                changes.append(f"updated pick list {doc.name!r}")
        existing = {
            r.name: r
            for r in (
                await session.execute(
                    select(pick_list_options).where(pick_list_options.c.pick_list == list_id)
                )
            ).all()
        }
        for position, option in enumerate(doc.options):
            values = {
                "description": option.description,
                "value": option.value,
                "color": option.color,
                "is_default": option.default,
                "active": option.active,
                "sort_order": position,
            }
            current = existing.get(option.name)
            if current is None:
                await session.execute(
                    pick_list_options.insert().values(pick_list=list_id, name=option.name, **values)
                )
                changes.append(f"created option {option.name!r} of pick list {doc.name!r}")
            elif any(getattr(current, k) != v for k, v in values.items()):
                await session.execute(
                    update(pick_list_options)
                    .where(pick_list_options.c.id == current.id)
                    .values(**values)
                )
                changes.append(f"updated option {option.name!r} of pick list {doc.name!r}")
        return int(list_id)

    async def _apply_relationship_types(
        self, session: AsyncSession, doc: ConfigDoc, changes: list[str]
    ) -> None:
        existing = {r.name: r for r in (await session.execute(select(relationship_types))).all()}
        has_default = any(r.default for r in doc.relationshipTypes)
        for rel in doc.relationshipTypes:
            current = existing.get(rel.name)
            if current is None:
                await session.execute(
                    relationship_types.insert().values(name=rel.name, is_default=rel.default)
                )
                changes.append(f"created relationship type {rel.name!r}")
            elif has_default and current.is_default != rel.default:
                await session.execute(
                    update(relationship_types)
                    .where(relationship_types.c.id == current.id)
                    .values(is_default=rel.default)
                )
                changes.append(f"updated relationship type {rel.name!r}")
        if has_default:
            named = {r.name for r in doc.relationshipTypes}
            for name, current in existing.items():
                if name not in named and current.is_default:
                    await session.execute(
                        update(relationship_types)
                        .where(relationship_types.c.id == current.id)
                        .values(is_default=False)
                    )
                    changes.append(f"relationship type {name!r} is no longer the default")

    async def _apply_item_type(
        self, session: AsyncSession, doc: ItemTypeDoc, list_ids: dict[str, int], changes: list[str]
    ) -> None:
        values = {
            "display": doc.display,
            "display_plural": doc.displayPlural,
            "description": doc.description,
            "image": doc.image,
            "category": doc.category,
            "widgets": json.dumps(doc.widgets),
            "system": doc.system,
        }
        row = (
            await session.execute(select(item_types).where(item_types.c.type_key == doc.typeKey))
        ).first()
        if row is None:
            type_id = await insert_id(
                session, item_types.insert().values(type_key=doc.typeKey, **values)
            )
            changes.append(f"created item type {doc.typeKey}")
        else:
            type_id = row.id
            if any(getattr(row, k) != v for k, v in values.items()):
                await session.execute(
                    update(item_types).where(item_types.c.id == type_id).values(**values)
                )
                changes.append(f"updated item type {doc.typeKey}")
        existing = {
            r.name: r
            for r in (
                await session.execute(
                    select(item_type_fields).where(item_type_fields.c.item_type == type_id)
                )
            ).all()
        }
        for position, field_doc in enumerate((*SYSTEM_FIELD_DOCS, *doc.fields)):
            name = f"{field_doc.name}${type_id}" if field_doc.custom else field_doc.name
            await self._apply_field(
                session,
                type_id,
                doc.typeKey,
                name,
                field_doc,
                position,
                list_ids,
                existing.get(name),
                changes,
            )
        if doc.workflow is not None:
            await self._apply_workflow(session, type_id, doc, list_ids, changes)

    async def _apply_field(
        self,
        session: AsyncSession,
        type_id: int,
        type_key: str,
        name: str,
        doc: FieldDoc,
        position: int,
        list_ids: dict[str, int],
        current: Any,
        changes: list[str],
    ) -> None:
        pick_list = None
        if doc.pickList is not None:
            pick_list = list_ids.get(doc.pickList)
            if pick_list is None:
                raise InvalidArgument(
                    f"item type {type_key}, field {doc.name}: no pick list {doc.pickList!r}"
                )
        values = {
            "label": doc.label,
            "field_type": doc.fieldType,
            "read_only": doc.readOnly,
            "required": doc.required,
            "trigger_suspect": doc.triggerSuspect,
            "synchronize": doc.synchronize,
            "pick_list": pick_list,
            "text_type": doc.textType,
            "position": position,
            "deleted": False,
        }
        if current is None:
            await session.execute(
                item_type_fields.insert().values(item_type=type_id, name=name, **values)
            )
            changes.append(f"created field {name} of item type {type_key}")
        elif any(getattr(current, k) != v for k, v in values.items()):
            await session.execute(
                update(item_type_fields).where(item_type_fields.c.id == current.id).values(**values)
            )
            verb = "restored" if current.deleted else "updated"
            changes.append(f"{verb} field {name} of item type {type_key}")

    async def _apply_workflow(
        self,
        session: AsyncSession,
        type_id: int,
        doc: ItemTypeDoc,
        list_ids: dict[str, int],
        changes: list[str],
    ) -> None:
        assert doc.workflow is not None
        status = next(f for f in doc.fields if f.name == doc.workflow.field)
        assert status.pickList is not None
        options = {
            r.name: r.id
            for r in (
                await session.execute(
                    select(pick_list_options).where(
                        pick_list_options.c.pick_list == list_ids[status.pickList]
                    )
                )
            ).all()
        }
        field_name = f"{status.name}${type_id}" if status.custom else status.name
        existing = {
            (r.from_option, r.to_option): r
            for r in (
                await session.execute(
                    select(workflow_transitions).where(workflow_transitions.c.item_type == type_id)
                )
            ).all()
        }
        for step in doc.workflow.transitions:
            for name in (step.from_, step.to):
                if name not in options:
                    raise InvalidArgument(
                        f"item type {doc.typeKey}: workflow status {name!r} "
                        f"is not an option of {status.pickList!r}"
                    )
            key = (options[step.from_], options[step.to])
            current = existing.get(key)
            if current is None:
                await session.execute(
                    workflow_transitions.insert().values(
                        item_type=type_id,
                        field=field_name,
                        from_option=key[0],
                        to_option=key[1],
                        action=step.action,
                    )
                )
                changes.append(f"created workflow step {step.action!r} of item type {doc.typeKey}")
            elif (current.action, current.field) != (step.action, field_name):
                await session.execute(
                    update(workflow_transitions)
                    .where(workflow_transitions.c.id == current.id)
                    .values(action=step.action, field=field_name)
                )
                changes.append(f"updated workflow step {step.action!r} of item type {doc.typeKey}")

    async def _apply_rule_set(
        self, session: AsyncSession, doc: RuleSetDoc, changes: list[str]
    ) -> None:
        row = (await session.execute(select(rule_sets).where(rule_sets.c.name == doc.name))).first()
        if row is None:
            set_id = await insert_id(
                session, rule_sets.insert().values(name=doc.name, description=doc.description)
            )
            changes.append(f"created relationship rule set {doc.name!r}")
        else:
            set_id = row.id
            if row.description != doc.description:
                await session.execute(
                    update(rule_sets)
                    .where(rule_sets.c.id == set_id)
                    .values(description=doc.description)
                )
                changes.append(f"updated relationship rule set {doc.name!r}")
        type_ids = {r.type_key: r.id for r in (await session.execute(select(item_types))).all()}
        rel_ids = {r.name: r.id for r in (await session.execute(select(relationship_types))).all()}
        existing = {
            (r.relationship_type, r.from_item_type, r.to_item_type)
            for r in (
                await session.execute(
                    select(rule_set_rules).where(rule_set_rules.c.rule_set == set_id)
                )
            ).all()
        }
        for rule in doc.rules:
            for key in (rule.fromItemType, rule.toItemType):
                if key not in type_ids:
                    raise InvalidArgument(f"rule set {doc.name}: no item type {key!r}")
            if rule.relationshipType not in rel_ids:
                raise InvalidArgument(
                    f"rule set {doc.name}: no relationship type {rule.relationshipType!r}"
                )
            wanted = (
                rel_ids[rule.relationshipType],
                type_ids[rule.fromItemType],
                type_ids[rule.toItemType],
            )
            if wanted not in existing:
                await session.execute(
                    rule_set_rules.insert().values(
                        rule_set=set_id,
                        relationship_type=wanted[0],
                        from_item_type=wanted[1],
                        to_item_type=wanted[2],
                    )
                )
                changes.append(
                    f"added rule {rule.fromItemType} {rule.relationshipType} {rule.toItemType} "
                    f"to {doc.name!r}"
                )
        if doc.projects:
            keys = {
                r.project_key: r.id
                for r in (
                    await session.execute(
                        select(projects.c.id, projects.c.project_key).where(
                            projects.c.project_key.in_(doc.projects)
                        )
                    )
                ).all()
            }
            members = set(
                (
                    await session.scalars(
                        select(rule_set_projects.c.project).where(
                            rule_set_projects.c.rule_set == set_id
                        )
                    )
                ).all()
            )
            for key in doc.projects:
                if key not in keys:
                    raise InvalidArgument(f"rule set {doc.name}: no project with key {key!r}")
                if keys[key] not in members:
                    # A project uses one rule set: joining this one leaves any other.
                    await session.execute(
                        rule_set_projects.delete().where(rule_set_projects.c.project == keys[key])
                    )
                    await session.execute(
                        rule_set_projects.insert().values(rule_set=set_id, project=keys[key])
                    )
                    changes.append(f"project {key} uses relationship rule set {doc.name!r}")

    # -- changes through the API -------------------------------------------------------

    async def add_field(self, item_type: int, doc: FieldDoc, pick_list_values: list[str]) -> int:
        """``POST /itemtypes/{id}/fields``: a new custom field, with a new pick list if asked."""
        require_admin("change the configuration")
        catalog = await self.catalog()
        type_ = catalog.item_type(item_type)
        if doc.pickList is not None and doc.fieldType not in ("LOOKUP", "MULTI_LOOKUP"):
            raise InvalidArgument("Only LOOKUP and MULTI_LOOKUP fields take a pick list.")
        check_field_name(catalog, doc.name)
        name = f"{doc.name}${item_type}"
        if type_.field(name) or type_.field(doc.name):
            raise AlreadyExists(
                f"A field named {doc.name!r} already exists on item type {type_.type_key}."
            )
        existing_list = None
        if doc.fieldType in ("LOOKUP", "MULTI_LOOKUP") and doc.pickList:
            existing_list = next(
                (p.id for p in catalog.pick_lists.values() if p.name == doc.pickList), None
            )
            if existing_list is None:
                raise InvalidArgument(f"pickList: no pick list named {doc.pickList!r}.")
        default = doc.fieldType == "LOOKUP" and (
            bool(pick_list_values)
            if existing_list is None
            else list_default(catalog, existing_list) is not None
        )
        check_required(type_, doc.required, doc.readOnly, default)
        async with self.db.transaction() as session:
            if await session.scalar(
                select(item_type_fields.c.id).where(
                    item_type_fields.c.item_type == item_type, item_type_fields.c.name == name
                )
            ):
                raise InvalidArgument(
                    f"name: a deleted field of item type {type_.type_key} was named "
                    f"{doc.name!r}; records keep its values, hidden, so the name is not "
                    "taken again. Pick another name."
                )
            pick_list = None
            if doc.fieldType in ("LOOKUP", "MULTI_LOOKUP"):
                if doc.pickList:
                    pick_list = existing_list
                else:
                    if not pick_list_values:
                        raise InvalidArgument(
                            "A LOOKUP field needs an existing pickList, "
                            "or pickListValues for a new one."
                        )
                    list_name = f"{type_.display} {doc.label}"
                    pick_list = await insert_id(
                        session, pick_lists.insert().values(name=list_name, description="")
                    )
                    for position, value in enumerate(pick_list_values):
                        await session.execute(
                            pick_list_options.insert().values(
                                pick_list=pick_list,
                                name=value,
                                sort_order=position,
                                is_default=position == 0,
                            )
                        )
            field_id = await insert_id(
                session,
                item_type_fields.insert().values(
                    item_type=item_type,
                    name=name,
                    label=doc.label,
                    field_type=doc.fieldType,
                    read_only=doc.readOnly,
                    required=doc.required,
                    trigger_suspect=doc.triggerSuspect,
                    synchronize=doc.synchronize,
                    pick_list=pick_list,
                    text_type=doc.textType,
                    position=len(type_.fields),
                ),
            )
        self.invalidate()
        return field_id

    def _custom_field(self, catalog: Catalog, item_type: int, field_id: int) -> Field:
        """A custom field of ``item_type``, or NotFound / InvalidArgument."""
        type_ = catalog.item_type(item_type)
        field = next((f for f in type_.fields if f.id == field_id), None)
        if field is None:
            raise NotFound(f"No field with id {field_id} on item type {type_.type_key}.")
        if "$" not in field.name:
            raise InvalidArgument(
                f"{field.name} is a system field of item type {type_.type_key}; only "
                "custom fields (name$<typeId>, added with POST /itemtypes/{id}/fields or "
                "marked custom in the configuration) can be changed or deleted."
            )
        return field

    async def update_field(self, item_type: int, field_id: int, values: dict[str, Any]) -> None:
        """``PATCH /itemtypes/{id}/fields/{fieldId}`` (labs): a custom field's label and
        flags (``CHANGEABLE``); its name, type and pick list never change."""
        require_admin("change the configuration")
        catalog = await self.catalog()
        field = self._custom_field(catalog, item_type, field_id)
        unknown = sorted(set(values) - set(CHANGEABLE))
        if unknown:
            raise InvalidArgument(
                f"{', '.join(unknown)} cannot change; a field's {', '.join(CHANGEABLE)} can."
            )
        if not values:
            raise InvalidArgument(f"Nothing to change: send one of {', '.join(CHANGEABLE)}.")
        if "label" in values and not str(values["label"]).strip():
            raise InvalidArgument("label must not be empty.")
        if "required" in values or "readOnly" in values:
            # The field as it would be; a label alone is changed on any field.
            required = values.get("required", field.required)
            read_only = values.get("readOnly", field.read_only)
            default = field.field_type == "LOOKUP" and default_option(catalog, field) is not None
            check_required(catalog.item_type(item_type), required, read_only, default)
        async with self.db.transaction() as session:
            await session.execute(
                update(item_type_fields)
                .where(item_type_fields.c.id == field_id)
                .values({CHANGEABLE[k]: v for k, v in values.items()})
            )
        self.invalidate()

    async def delete_field(self, item_type: int, field_id: int) -> None:
        """``DELETE /itemtypes/{id}/fields/{fieldId}`` (labs): the custom field leaves its
        type. Records keep its values, hidden from every read and dropped by the record's
        next write; the row stays (``deleted``) so that the name is not taken again."""
        require_admin("change the configuration")
        catalog = await self.catalog()
        field = self._custom_field(catalog, item_type, field_id)
        steps = [
            t for t in catalog.transitions if t.item_type == item_type and t.field == field.name
        ]
        if steps:
            raise FailedPrecondition(
                f"{field.name} is the status field of the workflow of item type "
                f"{catalog.item_type(item_type).type_key} ({len(steps)} step(s)); "
                "a workflow's field cannot be deleted."
            )
        async with self.db.transaction() as session:
            await session.execute(
                update(item_type_fields)
                .where(item_type_fields.c.id == field_id)
                .values(deleted=True)
            )
        self.invalidate()

    async def create_option(self, pick_list: int, values: dict[str, Any]) -> int:
        """``POST /picklists/{id}/options``."""
        require_admin("change the configuration")
        catalog = await self.catalog()
        if pick_list not in catalog.pick_lists:
            raise NotFound(f"No pick list with id {pick_list}.")
        name = values.get("name")
        if not name:
            raise InvalidArgument("name is required.")
        if any(o.name == name for o in catalog.options_of(pick_list)):
            raise AlreadyExists(
                f"An option named {name!r} already exists in pick list {pick_list}."
            )
        existing = catalog.options_of(pick_list)
        async with self.db.transaction() as session:
            if values.get("default"):
                await session.execute(
                    update(pick_list_options)
                    .where(pick_list_options.c.pick_list == pick_list)
                    .values(is_default=False)
                )
            option_id = await insert_id(
                session,
                pick_list_options.insert().values(
                    pick_list=pick_list,
                    name=name,
                    description=values.get("description") or "",
                    value=values.get("value") or "",
                    color=values.get("color") or "",
                    is_default=bool(values.get("default")),
                    active=values.get("active", True),
                    sort_order=values.get("sort_order", len(existing)),
                ),
            )
        self.invalidate()
        return option_id

    async def update_option(self, option_id: int, values: dict[str, Any]) -> None:
        """``PUT /picklistoptions/{id}``."""
        require_admin("change the configuration")
        catalog = await self.catalog()
        option = catalog.options.get(option_id)
        if option is None:
            raise NotFound(f"No pick list option with id {option_id}.")
        name = values.get("name")
        if (
            name is not None
            and name != option.name
            and any(o.name == name for o in catalog.options_of(option.pick_list))
        ):
            raise AlreadyExists(
                f"An option named {name!r} already exists in pick list {option.pick_list}."
            )
        changes = {
            column: values[key]
            for key, column in (
                ("name", "name"),
                ("description", "description"),
                ("value", "value"),
                ("color", "color"),
                ("sort_order", "sort_order"),
                ("default", "is_default"),
                ("active", "active"),
            )
            if key in values and values[key] is not None
        }
        async with self.db.transaction() as session:
            if changes.get("is_default"):
                await session.execute(
                    update(pick_list_options)
                    .where(pick_list_options.c.pick_list == option.pick_list)
                    .values(is_default=False)
                )
            if changes:
                await session.execute(
                    update(pick_list_options)
                    .where(pick_list_options.c.id == option_id)
                    .values(**changes)
                )
        self.invalidate()
