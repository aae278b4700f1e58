"""The declarative configuration document (``plumbline config apply FILE``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from plumbline.common.errors import InvalidArgument
from plumbline.common.fieldtypes import FieldType

CATEGORIES = (
    "CORE",
    "ATTACHMENT",
    "COMPONENT",
    "SET",
    "SECTION",
    "TEXT",
    "TEST_PLAN",
    "TEST_CYCLE",
    "TEST_RUN",
    "TEST_CASE",
    "DEFECT",
)
DEFAULT_WIDGETS = (
    "RELATIONSHIPS",
    "TAGS",
    "ATTACHMENTS",
    "ACTIVITIES",
    "HISTORY",
    "SYNCHRONIZED_ITEMS",
)


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class OptionDoc(_Doc):
    """A pick list option."""

    name: str = Field(min_length=1, max_length=255)
    description: str = ""
    value: str = ""
    color: str = ""
    default: bool = False
    active: bool = True


class PickListDoc(_Doc):
    """A pick list and its options, in order."""

    name: str = Field(min_length=1, max_length=255)
    description: str = ""
    kind: Literal["STANDARD", "LOOKUP_MATRIX"] = "STANDARD"
    options: list[OptionDoc] = Field(default_factory=list)


class RelationshipTypeDoc(_Doc):
    """A relationship type."""

    name: str = Field(min_length=1, max_length=255)
    default: bool = False


class FieldDoc(_Doc):
    """A field of an item type."""

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
    label: str = Field(min_length=1, max_length=255)
    fieldType: FieldType
    readOnly: bool = False
    required: bool = False
    triggerSuspect: bool = False
    synchronize: bool = False
    pickList: str | None = None
    textType: str = ""
    itemType: str | None = None
    custom: bool = False

    @model_validator(mode="after")
    def _lookups_need_a_pick_list(self) -> FieldDoc:
        if self.fieldType in ("LOOKUP", "MULTI_LOOKUP") and not self.pickList:
            raise ValueError(f"field {self.name}: {self.fieldType} fields need a pickList")
        if self.pickList and self.fieldType not in ("LOOKUP", "MULTI_LOOKUP"):
            raise ValueError(f"field {self.name}: only LOOKUP and MULTI_LOOKUP take a pickList")
        return self


class TransitionDoc(_Doc):
    """One allowed step of a workflow."""

    action: str = Field(min_length=1, max_length=255)
    from_: str = Field(alias="from")
    to: str


class WorkflowDoc(_Doc):
    """The status field of an item type and its allowed steps."""

    field: str
    transitions: list[TransitionDoc]


class ItemTypeDoc(_Doc):
    """An item type."""

    typeKey: str = Field(min_length=1, max_length=32, pattern=r"^[A-Z][A-Z0-9_]*$")
    display: str = Field(min_length=1, max_length=255)
    displayPlural: str = Field(min_length=1, max_length=255)
    description: str = ""
    image: str = ""
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    system: bool = False
    widgets: list[str] = Field(default_factory=lambda: list(DEFAULT_WIDGETS))
    fields: list[FieldDoc]
    workflow: WorkflowDoc | None = None

    @model_validator(mode="after")
    def _names_unique_and_workflow_known(self) -> ItemTypeDoc:
        names = [f.name for f in self.fields]
        if len(names) != len(set(names)):
            raise ValueError(f"item type {self.typeKey}: field names repeat")
        if self.workflow is not None:
            field = next((f for f in self.fields if f.name == self.workflow.field), None)
            if field is None or field.fieldType != "LOOKUP":
                raise ValueError(
                    f"item type {self.typeKey}: the workflow field must be one of its LOOKUP fields"
                )
        return self


class RuleDoc(_Doc):
    """Items of ``fromItemType`` may link to ``toItemType`` with ``relationshipType``."""

    relationshipType: str
    fromItemType: str
    toItemType: str


class RuleSetDoc(_Doc):
    """A named set of relationship rules and the projects (by key) that use it."""

    name: str = Field(min_length=1, max_length=255)
    description: str = ""
    rules: list[RuleDoc] = Field(default_factory=list)
    projects: list[str] = Field(default_factory=list)


class ConfigDoc(_Doc):
    """The whole document."""

    pickLists: list[PickListDoc] = Field(default_factory=list)
    relationshipTypes: list[RelationshipTypeDoc] = Field(default_factory=list)
    itemTypes: list[ItemTypeDoc] = Field(default_factory=list)
    relationshipRuleSets: list[RuleSetDoc] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> ConfigDoc:
        defaults = [r for r in self.relationshipTypes if r.default]
        if len(defaults) > 1:
            raise ValueError("at most one relationship type may be the default")
        return self


def parse(data: Any, source: str) -> ConfigDoc:
    """Validates a loaded document; errors name the place."""
    try:
        return ConfigDoc.model_validate(data or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:10]
        )
        raise InvalidArgument(f"{source}: {problems}") from None


def load(path: Path) -> ConfigDoc:
    """Reads a YAML (or JSON) configuration file."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InvalidArgument(f"{path}: cannot read the configuration ({exc})") from None
    return parse(data, str(path))


def default() -> ConfigDoc:
    """The configuration a fresh install ships with."""
    return load(Path(__file__).with_name("default_config.yaml"))
