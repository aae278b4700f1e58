"""The records responses carry, as types: what ``data`` holds for each resource.

The functions that build records (``representations.py`` and a few route modules) are
annotated with these types, so mypy holds them to it; the OpenAPI description's response
schemas are generated from the same classes (``schemas.py``). ``NotRequired`` members are
left out when the record has no value for them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict


class User(TypedDict):
    """A user."""

    id: int
    username: str
    firstName: str
    lastName: str
    email: str
    phone: str
    title: str
    location: str
    licenseType: str
    avatarUrl: str
    active: bool
    type: Literal["users"]


class UserGroup(TypedDict):
    """A user group; ``project`` only for a project's group."""

    id: int
    name: str
    description: str
    project: NotRequired[int]
    type: Literal["usergroups"]


class Permission(TypedDict):
    """A permission entry: a user or a user group has a role on a project or folder.

    Roles, weakest first: READ_ONLY (read), TEST_RUNNER (read, and record test results),
    READ_WRITE (read and change everything but permissions), PROJECT_ADMIN (also manage
    the project's permissions, and projects inside a folder).
    """

    id: int
    project: int
    user: NotRequired[int]
    userGroup: NotRequired[int]
    role: Literal["READ_ONLY", "TEST_RUNNER", "READ_WRITE", "PROJECT_ADMIN"]
    type: Literal["permissions"]


class ApiCredentials(TypedDict):
    """OAuth client credentials; the secret is shown in this response only."""

    id: int
    name: str
    clientId: str
    clientSecret: str
    user: int
    type: Literal["apicredentials"]


class ApiCredentialsInfo(TypedDict):
    """OAuth client credentials as listed: never the secret (labs)."""

    id: int
    name: str
    clientId: str
    user: int
    created: str
    type: Literal["apicredentials"]


class UserRoles(TypedDict):
    """A user's organisation roles: ORGANIZATION_ADMIN and USER_ADMIN (labs)."""

    user: int
    roles: list[str]
    type: Literal["userroles"]


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


class Activity(TypedDict):
    """An entry of the activity feed."""

    id: int
    date: str
    details: str
    action: str
    user: NotRequired[int]
    userComment: str
    item: NotRequired[int]
    eventType: str
    objectType: str
    type: Literal["activities"]


class ItemTypeField(TypedDict):
    """A field of an item type."""

    id: int
    name: str
    label: str
    fieldType: str
    readOnly: bool
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


class Lock(TypedDict):
    """An item's lock."""

    locked: bool
    lastLockedDate: NotRequired[str]
    lockedBy: NotRequired[int]


class AllowedResource(TypedDict):
    """The methods the caller may use on a record."""

    allowed: list[str]


class ItemResources(TypedDict):
    """``resources`` of an item."""

    self: AllowedResource


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


class TestPlan(TestRecordBase):
    """A test plan; ``fields`` holds the values of the test plan item type's fields."""

    archived: bool
    lock: Lock
    type: Literal["testplans"]


class TestCycle(TestRecordBase):
    """A test cycle of a test plan."""

    type: Literal["testcycles"]


class TestRun(TestRecordBase):
    """A test run: one test case's execution in a test cycle.

    ``fields`` carries ``testCase``, ``testCycle``, ``testPlan``, ``testRunStatus``,
    ``testRunSteps``, ``actualResults``, ``executionDate`` and ``assignedTo``.
    ``testGroup`` is the test plan's id and the test group's id.
    """

    testCaseVersionNumber: int
    sortOrderFromTestGroup: int
    testGroup: list[int]
    lock: Lock
    type: Literal["testruns"]


class Attachment(TestRecordBase):
    """An attachment: ``fields`` holds ``name`` and ``description``; the file's name,
    content type and size are empty and 0 until a file is uploaded."""

    lock: Lock
    fileName: str
    mimeType: str
    fileSize: int
    type: Literal["attachments"]


class AbstractItem(TestRecordBase):
    """Any abstract item: an item, a test plan, cycle or run, or an attachment; the
    members after ``resources`` are those of its own type."""

    type: Literal["items", "testplans", "testcycles", "testruns", "attachments"]
    childItemType: NotRequired[int]
    location: NotRequired[Location]
    lock: NotRequired[Lock]
    archived: NotRequired[bool]
    testCaseVersionNumber: NotRequired[int]
    sortOrderFromTestGroup: NotRequired[int]
    testGroup: NotRequired[list[int]]
    fileName: NotRequired[str]
    mimeType: NotRequired[str]
    fileSize: NotRequired[int]


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


class TestGroup(TypedDict):
    """A test group of a test plan: the test cases run together."""

    id: int
    name: str
    assignedTo: NotRequired[int]
    type: Literal["testgroups"]


class TestCycleTestGroup(TypedDict):
    """A test group as a test cycle took it."""

    testGroup: int
    name: str
    assignedTo: NotRequired[int]
    testCycle: int
    type: Literal["testcycletestgroups"]


class TestRunResult(TypedDict):
    """The outcome for one test run of a bulk result update."""

    id: int
    status: int
    message: str
    testRunStatus: str


class IngestMatch(TypedDict):
    """A report's test case and the run it set."""

    name: str
    classname: str
    testRun: int
    testCase: int
    documentKey: str
    #: ``property <name>=<value>`` or ``name``
    matchedBy: str
    testRunStatus: str
    #: The first line of what went to actualResults.
    summary: str


class IngestUnmatched(TypedDict):
    """A report's test case no run of the cycle answers to."""

    name: str
    classname: str
    references: list[str]
    status: str


class IngestAnswer(TypedDict):
    """What a JUnit report did to a test cycle."""

    testCycle: int
    #: How many <testcase> elements the report held.
    testCases: int
    matched: list[IngestMatch]
    unmatched: list[IngestUnmatched]
    #: The stored answer of an earlier upload with the same Idempotency-Key.
    replayed: bool


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


class Category(TypedDict):
    """A category path element."""

    id: int
    name: str
    path: str
    visible: bool
    parent: NotRequired[int]
    type: Literal["categories"]


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
