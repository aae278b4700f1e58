"""What records of several families share (the members of every abstract item, its
lock, its place in the tree, the methods allowed on it), and the API's versions and
endpoints."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict


class AllowedResource(TypedDict):
    """The methods the caller may use on a record."""

    allowed: list[str]


class ItemResources(TypedDict):
    """``resources`` of an item."""

    self: AllowedResource


class Lock(TypedDict):
    """An item's lock."""

    locked: bool
    lastLockedDate: NotRequired[str]
    lockedBy: NotRequired[int]


class Parent(TypedDict, total=False):
    """Where an item hangs: under an item, or at the root of a project."""

    item: int
    project: int


class Location(TypedDict):
    """An item's place in its project's tree."""

    sortOrder: int
    globalSortOrder: int
    sequence: str
    parent: Parent


class TestRecordBase(TypedDict):
    """What test plans, cycles and runs share with every abstract item."""

    id: int
    documentKey: str
    globalId: str
    project: int
    itemType: int
    createdDate: str
    modifiedDate: str
    lastActivityDate: str
    createdBy: int
    modifiedBy: int
    fields: dict[str, Any]
    resources: ItemResources


class Version(TypedDict):
    """An API version."""

    name: str
    href: str
    status: str
    type: Literal["versions"]


class Endpoint(TypedDict):
    """A resource of an API version."""

    name: str
    href: str
    type: Literal["endpoints"]
