"""Projects and their configuration: item types, pick lists, relationship types and
rules, categories."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict


class Project(TypedDict):
    """A project or project folder."""

    id: int
    projectKey: NotRequired[str]
    parent: NotRequired[int]
    isFolder: bool
    createdDate: str
    modifiedDate: str
    createdBy: int
    modifiedBy: int
    fields: dict[str, Any]
    type: Literal["projects"]


class ItemTypeField(TypedDict):
    """A field of an item type."""

    id: int
    name: str
    label: str
    fieldType: str
    readOnly: bool
    #: Whether the API may still write the field while it is read-only: never here (a
    #: read-only field in a body is ignored), so always false, the contract's default.
    readOnlyAllowApiOverwrite: bool
    required: bool
    triggerSuspect: bool
    synchronize: bool
    pickList: NotRequired[int]
    textType: NotRequired[str]
    itemType: NotRequired[int]


class ItemTypeWidget(TypedDict):
    """A widget of an item type."""

    name: str
    synchronize: bool


class ItemType(TypedDict):
    """An item type with its fields."""

    id: int
    typeKey: str
    display: str
    displayPlural: str
    description: str
    image: str
    category: str
    widgets: list[ItemTypeWidget]
    fields: list[ItemTypeField]
    system: bool
    type: Literal["itemtypes"]


class PickList(TypedDict):
    """A pick list."""

    id: int
    name: str
    description: str
    pickListType: str
    type: Literal["picklists"]


class PickListOption(TypedDict):
    """An option of a pick list."""

    id: int
    name: str
    description: str
    value: str
    default: bool
    active: bool
    color: str
    sortOrder: int
    pickList: int
    type: Literal["picklistoptions"]


class RelationshipType(TypedDict):
    """A relationship type."""

    id: int
    name: str
    isDefault: bool
    type: Literal["relationshiptypes"]


class RelationshipRule(TypedDict):
    """One allowed relationship: its type and the item types at both ends."""

    relationshipType: int
    fromItemType: int
    toItemType: int


class RelationshipRuleSet(TypedDict):
    """A set of relationship rules."""

    id: int
    name: str
    description: str
    rules: list[RelationshipRule]
    type: Literal["relationshiprulesets"]


class Category(TypedDict):
    """A category path element."""

    id: int
    name: str
    path: str
    visible: bool
    parent: NotRequired[int]
    type: Literal["categories"]
