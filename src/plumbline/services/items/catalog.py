"""The items service's configuration snapshot, loaded from its database."""

from __future__ import annotations

import json

from sqlalchemy import select

from plumbline.common.catalog import (
    Catalog,
    Field,
    ItemType,
    Option,
    PickList,
    RelationshipType,
    Rule,
    RuleSet,
    Transition,
)
from plumbline.common.db import Database
from plumbline.services.items.models import (
    item_type_fields,
    item_types,
    pick_list_options,
    pick_lists,
    relationship_types,
    rule_set_projects,
    rule_set_rules,
    rule_sets,
    workflow_transitions,
)


async def load_catalog(db: Database) -> Catalog:
    """Reads the whole configuration in one transaction."""
    async with db.read() as session:
        fields: dict[int, list[Field]] = {}
        for row in (
            await session.execute(
                select(item_type_fields)
                .where(item_type_fields.c.deleted.is_(False))
                .order_by(
                    item_type_fields.c.item_type,
                    item_type_fields.c.position,
                    item_type_fields.c.id,
                )
            )
        ).all():
            fields.setdefault(row.item_type, []).append(
                Field(
                    row.id,
                    row.item_type,
                    row.name,
                    row.label,
                    row.field_type,
                    row.read_only,
                    row.required,
                    row.trigger_suspect,
                    row.synchronize,
                    row.pick_list,
                    row.text_type,
                    row.ref_item_type,
                )
            )
        types = {
            row.id: ItemType(
                row.id,
                row.type_key,
                row.display,
                row.display_plural,
                row.description,
                row.image,
                row.category,
                tuple(json.loads(row.widgets)),
                row.system,
                tuple(fields.get(row.id, ())),
            )
            for row in (await session.execute(select(item_types).order_by(item_types.c.id))).all()
        }
        lists = {
            row.id: PickList(row.id, row.name, row.description, row.kind)
            for row in (await session.execute(select(pick_lists))).all()
        }
        options = {
            row.id: Option(
                row.id,
                row.pick_list,
                row.name,
                row.description,
                row.value,
                row.color,
                row.is_default,
                row.active,
                row.sort_order,
            )
            for row in (await session.execute(select(pick_list_options))).all()
        }
        rel_types = {
            row.id: RelationshipType(row.id, row.name, row.is_default)
            for row in (await session.execute(select(relationship_types))).all()
        }
        transitions = tuple(
            Transition(r.id, r.item_type, r.field, r.from_option, r.to_option, r.action)
            for r in (
                await session.execute(
                    select(workflow_transitions).order_by(workflow_transitions.c.id)
                )
            ).all()
        )
        rules: dict[int, list[Rule]] = {}
        for r in (
            await session.execute(select(rule_set_rules).order_by(rule_set_rules.c.id))
        ).all():
            rules.setdefault(r.rule_set, []).append(
                Rule(r.relationship_type, r.from_item_type, r.to_item_type)
            )
        members: dict[int, list[int]] = {}
        for r in (await session.execute(select(rule_set_projects))).all():
            members.setdefault(r.rule_set, []).append(r.project)
        sets = {
            r.id: RuleSet(
                r.id,
                r.name,
                r.description,
                tuple(rules.get(r.id, ())),
                tuple(sorted(members.get(r.id, ()))),
            )
            for r in (await session.execute(select(rule_sets))).all()
        }
    return Catalog(types, lists, options, rel_types, transitions, sets)
