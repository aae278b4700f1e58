"""History: item versions, records as they were at a version, baselines and their
differences, relationships as they were."""

from __future__ import annotations

from typing import Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict

from plumbline.gateway.records.attachments import Attachment
from plumbline.gateway.records.items import AbstractItem, Item
from plumbline.gateway.records.testmgmt import TestCycle, TestPlan, TestRun


class ItemVersion(TypedDict):
    """A version of an abstract item: who made it, when, and what it changed."""

    versionedItem: list[int]
    item: int
    versionNumber: int
    changeDetails: str
    comment: str
    createdDate: str
    createdBy: NotRequired[int]
    type: Literal["versions"]


class _Versioned(TypedDict):
    """What a record at a version adds: its version number and the current one (absent
    when the record is deleted)."""

    version: int
    currentVersion: NotRequired[int]


class VersionedItem(Item, _Versioned):
    """An item as it was at a version."""


class VersionedTestPlan(TestPlan, _Versioned):
    """A test plan as it was at a version."""


class VersionedTestCycle(TestCycle, _Versioned):
    """A test cycle as it was at a version."""


class VersionedTestRun(TestRun, _Versioned):
    """A test run as it was at a version."""


class VersionedAttachment(Attachment, _Versioned):
    """An attachment as it was at a version."""


class AbstractVersionedItem(AbstractItem, _Versioned):
    """Any abstract item as it was at a version."""


class BaselineOrigin(TypedDict):
    """Where a baseline's items came from: its project, and an item, a filter or a
    release when it was narrowed to one."""

    project: int
    item: NotRequired[int]
    filter: NotRequired[int]
    release: NotRequired[int]


class Baseline(TypedDict):
    """A baseline: a named set of item versions of a project."""

    id: int
    name: str
    description: str
    createdDate: str
    createdBy: NotRequired[int]
    project: int
    origin: BaselineOrigin
    folder: NotRequired[int]
    type: Literal["baselines"]


class BaselineFolder(TypedDict):
    """A folder of a project's baselines (labs); ``parent`` is the folder it is in."""

    id: int
    name: str
    project: int
    parent: NotRequired[int]
    createdDate: str
    createdBy: NotRequired[int]
    type: Literal["baselinefolders"]


class BaselineParent(TypedDict, total=False):
    """Where a baseline item was: under an item (``[id, version]``) or at the root."""

    item: list[int]
    project: int


class BaselineLocation(TypedDict):
    """A baseline item's place when the baseline was taken."""

    sequence: str
    parent: BaselineParent


class BaselineItem(VersionedItem):
    """An item of a baseline: the item at the version the baseline holds, its current
    version, and where it was when the baseline was taken."""

    baseline: int
    baselineLocation: BaselineLocation


class BaselineChange(TypedDict):
    """One difference between a baseline and another one (or its origin now): an item
    added, removed or changed (``changedFields`` names what), or a relationship added or
    removed. Versions are 0 where there is none."""

    kind: Literal["ITEM", "RELATIONSHIP"]
    change: Literal["ADDED", "REMOVED", "CHANGED"]
    id: int
    fromVersion: NotRequired[int]
    toVersion: NotRequired[int]
    changedFields: NotRequired[list[str]]
    fromItem: NotRequired[int]
    toItem: NotRequired[int]
    relationshipType: NotRequired[int]
    type: Literal["baselinechanges"]


class VersionedRelationship(TypedDict):
    """A relationship as it was at a time; each end is ``[item id, version then]``."""

    id: int
    fromItem: list[int]
    toItem: list[int]
    suspect: bool
    relationshipType: NotRequired[int]
    type: Literal["relationships"]
