"""The configuration as its readers see it: an immutable ``Catalog`` snapshot.

The items service owns the configuration and loads it from its database
(``plumbline.services.items.catalog``); other services build the same snapshot from the
items service's ``Configuration`` calls, so every service checks fields one way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from plumbline.common.errors import InvalidArgument, NotFound


@dataclass(frozen=True)
class Field:
    """A field of an item type."""

    id: int
    item_type: int
    name: str
    label: str
    field_type: str
    read_only: bool
    required: bool
    trigger_suspect: bool
    synchronize: bool
    pick_list: int | None
    text_type: str
    ref_item_type: int | None


@dataclass(frozen=True)
class ItemType:
    """An item type with its fields in order."""

    id: int
    type_key: str
    display: str
    display_plural: str
    description: str
    image: str
    category: str
    widgets: tuple[str, ...]
    system: bool
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field | None:
        """The field called ``name``, if any."""
        return next((f for f in self.fields if f.name == name), None)

    @cached_property
    def names(self) -> frozenset[str]:
        """The names of its fields."""
        return frozenset(f.name for f in self.fields)


@dataclass(frozen=True)
class Option:
    """A pick list option."""

    id: int
    pick_list: int
    name: str
    description: str
    value: str
    color: str
    default: bool
    active: bool
    sort_order: int


@dataclass(frozen=True)
class PickList:
    """A pick list."""

    id: int
    name: str
    description: str
    kind: str


@dataclass(frozen=True)
class RelationshipType:
    """A relationship type."""

    id: int
    name: str
    is_default: bool


@dataclass(frozen=True)
class Transition:
    """One allowed workflow step."""

    id: int
    item_type: int
    field: str
    from_option: int
    to_option: int
    action: str


@dataclass(frozen=True)
class Rule:
    """One allowed kind of link."""

    relationship_type: int
    from_item_type: int
    to_item_type: int


@dataclass(frozen=True)
class RuleSet:
    """A relationship rule set and the projects that use it."""

    id: int
    name: str
    description: str
    rules: tuple[Rule, ...]
    projects: tuple[int, ...]


@dataclass(frozen=True)
class Catalog:
    """A consistent snapshot of the whole configuration."""

    item_types: dict[int, ItemType] = field(default_factory=dict)
    pick_lists: dict[int, PickList] = field(default_factory=dict)
    options: dict[int, Option] = field(default_factory=dict)
    relationship_types: dict[int, RelationshipType] = field(default_factory=dict)
    transitions: tuple[Transition, ...] = ()
    rule_sets: dict[int, RuleSet] = field(default_factory=dict)

    def item_type(self, item_type_id: int) -> ItemType:
        """An item type or NotFound."""
        found = self.item_types.get(item_type_id)
        if found is None:
            raise NotFound(f"No item type with id {item_type_id}.")
        return found

    def by_key(self, type_key: str) -> ItemType | None:
        """An item type by its key."""
        return next((t for t in self.item_types.values() if t.type_key == type_key), None)

    def options_of(self, pick_list: int) -> list[Option]:
        """A pick list's options in order."""
        return sorted(
            (o for o in self.options.values() if o.pick_list == pick_list),
            key=lambda o: (o.sort_order, o.id),
        )

    def default_relationship_type(self) -> RelationshipType:
        """The default relationship type (the first one if none is marked)."""
        types = sorted(self.relationship_types.values(), key=lambda t: t.id)
        if not types:
            raise InvalidArgument("no relationship types are configured")
        return next((t for t in types if t.is_default), types[0])
