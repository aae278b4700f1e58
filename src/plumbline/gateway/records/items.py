"""Items and what hangs on them: relationships, tags, releases, comments, links,
synchronization, workflow, moves, bulk patches and filters."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict

from plumbline.gateway.records.common import ItemResources, Location, Lock, TestRecordBase


class Item(TypedDict):
    """An item; ``fields`` holds the values of its item type's fields."""

    id: int
    documentKey: str
    globalId: str
    itemType: int
    childItemType: NotRequired[int]
    project: int
    createdDate: str
    modifiedDate: str
    lastActivityDate: str
    createdBy: int
    modifiedBy: int
    fields: dict[str, Any]
    resources: ItemResources
    location: Location
    lock: Lock
    type: Literal["items"]


class AbstractItem(TestRecordBase):
    """Any abstract item: an item, a test plan, cycle or run, or an attachment; the
    members after ``resources`` are those of its own type."""

    type: Literal["items", "testplans", "testcycles", "testruns", "attachments"]
    childItemType: NotRequired[int]
    location: NotRequired[Location]
    lock: NotRequired[Lock]
    archived: NotRequired[bool]
    testCaseVersionNumber: NotRequired[int]
    testCaseCurrentVersionNumber: NotRequired[int]
    sortOrderFromTestGroup: NotRequired[int]
    testGroup: NotRequired[list[int]]
    fileName: NotRequired[str]
    mimeType: NotRequired[str]
    fileSize: NotRequired[int]


class Relationship(TypedDict):
    """A relationship between two items."""

    id: int
    fromItem: int
    toItem: int
    relationshipType: int
    suspect: bool
    type: Literal["relationships"]


class Tag(TypedDict):
    """A tag of a project."""

    id: int
    name: str
    project: int
    type: Literal["tags"]


class Release(TypedDict):
    """A release of a project."""

    id: int
    name: str
    description: str
    project: int
    releaseDate: NotRequired[str]
    active: bool
    archived: bool
    itemCount: int
    type: Literal["releases"]


class CommentText(TypedDict):
    """A comment's text."""

    text: str


class CommentLocation(TypedDict, total=False):
    """What a comment is about: an item or a project."""

    item: int
    project: int


class Comment(TypedDict):
    """A comment."""

    id: int
    inReplyTo: NotRequired[int]
    createdDate: str
    createdBy: int
    modifiedBy: int
    deleted: bool
    status: str
    body: CommentText
    commentType: str
    location: CommentLocation
    type: Literal["comments"]


class Link(TypedDict):
    """A URL attached to an item."""

    id: int
    item: int
    url: str
    description: str
    type: Literal["links"]


class CollectionSummary(TypedDict):
    """How the children of two synchronized containers differ."""

    totalChildren: int
    totalMissing: int
    totalOutOfSync: int


class SyncStatus(TypedDict):
    """Whether two synchronized items are alike."""

    inSync: bool
    collectionSummary: NotRequired[CollectionSummary]


class WorkflowTransition(TypedDict):
    """A workflow step an item can take now."""

    id: str
    action: str
    newStatus: int
    type: Literal["workflowtransitions"]


class MovedItems(TypedDict):
    """The result of moving an item to another project."""

    workId: str
    movedItems: list[int]


class PatchResult(TypedDict):
    """The outcome for one item of a bulk PATCH."""

    id: int
    status: int
    message: str


class PatchResults(TypedDict):
    """The outcome of a bulk PATCH."""

    workId: str
    results: list[PatchResult]


class Filter(TypedDict):
    """A stored query over items."""

    id: int
    name: str
    author: int
    projectScope: str
    specifiedProject: NotRequired[int]
    filterQuery: dict[str, Any]
    public: bool
    type: Literal["filters"]


class FilterCount(TypedDict):
    """How many items a filter finds."""

    count: int
    filter: int
    type: Literal["filtercounts"]


class ReqifImportAnswer(TypedDict):
    """What a ReqIF import wrote (or, with dryRun, would write) into a project."""

    project: int
    dryRun: bool
    #: Items made: one per SPEC-OBJECT (and a folder per specification when several).
    items: int
    relationships: int
    #: Items made by item type key.
    byType: dict[str, int]
    #: The first item's id (the others follow in the document's tree order); 0 in a
    #: dry run.
    firstItemId: int
    #: Versions written (or, dry, to write) for items the document changed or moved.
    versions: int
    #: The identifiers of the objects (and specifications' folders) that are new.
    added: list[str]
    changed: list[ReqifChanged]
    moved: list[ReqifMoved]
    #: Items the document holds as they are.
    unchanged: int
    #: Parents whose children the import puts in the document's order (an item's place
    #: among its siblings is not a version).
    reordered: list[ReqifReordered]
    #: A .reqifz's files the items name, as attachments of those items.
    files: ReqifFiles
    #: The project's items of the item types the import writes that the document does
    #: not hold; deleted with deleteLeft=true.
    left: list[ReqifLeft]
    relationshipsLeft: list[ReqifRelationshipLeft]
    #: Items (each with what is under it) and relationships deleted.
    deleted: int
    relationshipsDeleted: int


class ReqifChanged(TypedDict):
    """An item whose fields the document changes."""

    identifier: str
    item: int
    #: The fields whose values differ.
    fields: list[str]


class ReqifMoved(TypedDict):
    """An item the document puts under another parent."""

    identifier: str
    item: int
    #: The parent it had: an item's id, or null for the project's root.
    formerParent: int | None
    #: Its new parent: an item's id, the identifier of an object the import adds, or
    #: null for the project's root.
    parent: int | str | None


class ReqifFiles(TypedDict):
    """What a .reqifz import does with the archive's files its objects name (XHTML
    ``<object data="files/...">``)."""

    #: New attachments made (each file once), and the links to items they got.
    attached: int
    links: int
    #: Attachments on an item with the file's name whose content the file replaces.
    replaced: int
    #: Files an item has already (same name, same content): left as they are.
    unchanged: int


class ReqifReordered(TypedDict):
    """A parent whose children the document orders otherwise than the project."""

    #: An item's id, the identifier of an object the import adds, or null for the
    #: project's root.
    parent: int | str | None
    #: Its children the document holds, put first in the document's order.
    children: int


class ReqifLeft(TypedDict):
    """An item the document no longer holds."""

    item: int
    globalId: str
    name: str


class ReqifRelationshipLeft(TypedDict):
    """A relationship between items the document holds that it no longer has."""

    id: int
    fromItem: int
    toItem: int
    relationshipType: int


class ImportAnswer(TypedDict):
    """What a bulk import wrote into a project."""

    project: int
    #: Lines read, blank ones included.
    lines: int
    items: int
    relationships: int
    #: The item on the k-th item line of the file (from 0) has id firstItemId + k.
    firstItemId: int
    #: Versions the version lines wrote (each an item's next version).
    versions: int
    #: Items (each with what is under it) and relationships the deletion lines deleted.
    deleted: int
    relationshipsDeleted: int
