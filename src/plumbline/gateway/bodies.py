"""Request bodies: strict types, no unknown fields, bounded strings."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal, NotRequired, TypeVar

from annotated_types import Interval
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from plumbline.common import int64
from plumbline.common.fields import FIELD_NAME, MAX_FIELD_NAME
from plumbline.common.fieldtypes import CustomFieldType

T = TypeVar("T")

Name = Annotated[str, StringConstraints(min_length=1, max_length=255)]
Short = Annotated[str, StringConstraints(max_length=255)]
Phone = Annotated[str, StringConstraints(max_length=64)]
Email = Annotated[str, StringConstraints(max_length=255, pattern=r"^[^@\s]+@[^@\s]+$")]
Text = Annotated[str, StringConstraints(max_length=65535)]


def numeric_string(value: Any) -> Any:
    """A string of digits as the integer it spells (``int64.spelled``): clients send ids
    taken from ``meta.location`` as ``"1004"``. Any other string is refused; other JSON
    types are left to the (strict) integer check."""
    if not isinstance(value, str):
        return value
    number = int64.spelled(value)
    if number is None:
        raise PydanticCustomError(
            "int_parsing", "must be an integer (a JSON number or a string of digits)"
        )
    return number


# An integer member of a body: a JSON number, or a string of digits. Described as the
# contract's ``integer`` (the leniency is the binding's, documented in docs/gateway.md).
Integer = Annotated[int, BeforeValidator(numeric_string)]
# Ids travel to the services as int64: anything larger is a 400, not a 500.
RecordId = Annotated[int, Interval(ge=int64.MIN, le=int64.MAX), BeforeValidator(numeric_string)]
# A read-only member of a GET body: accepted so that clients can PUT back what they read,
# ignored, and left out of the description (its examples would suggest it can be set).
ReadOnly = Annotated[T, SkipJsonSchema()]

# Values of these go to the services as JSON (orjson, 64-bit integers, UTF-8 without NUL):
# the routes encode them with ``jsonvalues.free_json``, which names what cannot be sent.
JsonObject = dict[str, Any]

LicenseType = Literal[
    "NAMED",
    "FLOATING",
    "STAKEHOLDER",
    "FLOATING_COLLABORATOR",
    "RESERVED_COLLABORATOR",
    "FLOATING_REVIEWER",
    "RESERVED_REVIEWER",
    "NAMED_REVIEWER",
    "TEST_RUNNER",
    "EXPIRING_TRIAL",
    "INACTIVE",
    "CREATOR",
]


class Strict(BaseModel):
    """Unknown fields and loose types are errors."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        # PostgreSQL cannot store NUL in text; refuse it everywhere, on both backends.
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("must not contain NUL characters")
        return value


class UserCreate(Strict):
    """RequestUser on POST."""

    username: Name
    password: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    firstName: Name
    lastName: Name
    email: Email
    licenseType: LicenseType
    phone: Phone | None = None
    title: Short | None = None
    location: Short | None = None
    authenticationType: dict[str, Any] | None = None


class UserUpdate(Strict):
    """RequestUser on PUT; read-only members of a GET body are accepted and ignored."""

    username: Name | None = None
    firstName: Name | None = None
    lastName: Name | None = None
    email: Email | None = None
    licenseType: LicenseType | None = None
    phone: Phone | None = None
    title: Short | None = None
    location: Short | None = None
    password: str | None = None
    id: ReadOnly[RecordId | None] = None
    type: ReadOnly[str | None] = None
    active: ReadOnly[bool | None] = None
    avatarUrl: ReadOnly[str | None] = None
    authenticationType: dict[str, Any] | None = None


class ActiveStatus(Strict):
    """RequestActiveStatus."""

    active: bool


class GroupCreate(Strict):
    """A new user group."""

    name: Name
    description: Text | None = None
    project: RecordId | None = None


class GroupUpdate(Strict):
    """A user group's new values; ``id`` and ``type`` of a GET body are ignored."""

    name: Name | None = None
    description: Text | None = None
    project: RecordId | None = None
    id: ReadOnly[RecordId | None] = None
    type: ReadOnly[str | None] = None


class PermissionEntry(Strict):
    """One permission entry: exactly one of ``user`` and ``userGroup``, and a role."""

    user: RecordId | None = None
    userGroup: RecordId | None = None
    role: Literal["READ_ONLY", "TEST_RUNNER", "READ_WRITE", "PROJECT_ADMIN"]


class GroupUser(Strict):
    """RequestGroupUser."""

    user: RecordId


class ProjectFields(Strict):
    """The fields a project has."""

    name: Name | None = None
    description: Text | None = None
    projectKey: Short | None = None
    projectManager: RecordId | None = None
    statusId: RecordId | None = None
    projectGroup: RecordId | None = None
    user1: RecordId | None = None
    text1: Text | None = None
    date1: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None
    date2: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None

    @field_validator("date1", "date2")
    @classmethod
    def _real_date(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                date.fromisoformat(value)
            except ValueError:
                raise ValueError(f"{value!r} is not a calendar date (yyyy-MM-dd)") from None
        return value


class ProjectBody(Strict):
    """RequestProject; the read-only members of a GET body are accepted and ignored."""

    projectKey: Annotated[str, StringConstraints(max_length=32)] | None = None
    isFolder: bool | None = None
    parent: RecordId | None = None
    fields: ProjectFields = Field(default_factory=ProjectFields)
    id: ReadOnly[RecordId | None] = None
    type: ReadOnly[str | None] = None
    createdDate: ReadOnly[str | None] = None
    modifiedDate: ReadOnly[str | None] = None
    createdBy: ReadOnly[RecordId | None] = None
    modifiedBy: ReadOnly[RecordId | None] = None


class CredentialsCreate(Strict):
    """A new set of API client credentials."""

    name: Name


class RolesBody(Strict):
    """A user's organisation roles (all of them: the list replaces the user's roles)."""

    roles: list[Short] = Field(max_length=8)


class FieldCreate(Strict):
    """A new custom field of an item type (``pickListValues`` makes a new pick list)."""

    name: Annotated[
        str,
        StringConstraints(min_length=1, max_length=MAX_FIELD_NAME, pattern=FIELD_NAME.pattern),
        Field(
            description=f"A letter, then letters, digits and _; at most {MAX_FIELD_NAME} "
            "characters. Stored as name$<typeId>. Not the name of a system field "
            "(documentKey, name, testRunSteps, executionDate, ...) in any case."
        ),
    ]
    label: Name
    fieldType: CustomFieldType
    readOnly: bool = False
    required: bool = False
    triggerSuspect: bool = False
    synchronize: bool = False
    pickList: Integer | None = None
    textType: Annotated[str, StringConstraints(max_length=32)] | None = None
    pickListValues: list[Name] | None = None


class FieldUpdate(Strict):
    """What changes of a custom field (labs): the members sent; the name, type and pick
    list of a field never change."""

    label: Name | None = None
    required: bool | None = None
    readOnly: bool | None = None
    triggerSuspect: bool | None = None
    synchronize: bool | None = None


class PickListOptionBody(Strict):
    """RequestPickListOption; ``id``, ``type`` and ``pickList`` of a GET body are ignored."""

    name: Name | None = None
    description: Text | None = None
    value: Short | None = None
    color: Annotated[str, StringConstraints(max_length=32)] | None = None
    sortOrder: Integer | None = None
    default: bool | None = None
    active: bool | None = None
    id: ReadOnly[Integer | None] = None
    type: ReadOnly[str | None] = None
    pickList: ReadOnly[Integer | None] = None


class ItemParent(Strict):
    """RequestParent: an item or a project."""

    item: Integer | None = None
    project: Integer | None = None


class ItemLocationBody(Strict):
    """RequestLocation; the read-only members of a GET body are accepted and ignored."""

    parent: ItemParent | None = None
    sortOrder: ReadOnly[Integer | None] = None
    globalSortOrder: ReadOnly[Integer | None] = None
    sequence: ReadOnly[str | None] = None


class ItemBody(Strict):
    """RequestItem; the read-only members of a GET ``data`` object are ignored."""

    globalId: Annotated[str, StringConstraints(min_length=1, max_length=128)] | None = None
    project: Integer | None = None
    itemType: Integer | None = None
    childItemType: Integer | None = None
    location: ItemLocationBody | None = None
    fields: JsonObject = Field(default_factory=dict)
    id: ReadOnly[Integer | None] = None
    documentKey: ReadOnly[str | None] = None
    createdDate: ReadOnly[str | None] = None
    modifiedDate: ReadOnly[str | None] = None
    lastActivityDate: ReadOnly[str | None] = None
    createdBy: ReadOnly[Integer | None] = None
    modifiedBy: ReadOnly[Integer | None] = None
    lock: ReadOnly[dict[str, Any] | None] = None
    resources: ReadOnly[dict[str, Any] | None] = None
    type: ReadOnly[str | None] = None


class RelationshipBody(Strict):
    """RequestRelationship; ``id``, ``suspect`` and ``type`` of a GET body are ignored."""

    fromItem: Integer
    toItem: Integer
    relationshipType: Integer | None = None
    id: ReadOnly[Integer | None] = None
    suspect: ReadOnly[bool | None] = None
    type: ReadOnly[str | None] = None


class LockBody(Strict):
    """RequestLock; other members of a GET lock body are ignored."""

    locked: bool
    lastLockedDate: ReadOnly[str | None] = None
    lockedBy: ReadOnly[Integer | None] = None


class TagBody(Strict):
    """RequestTag."""

    name: Name
    project: Integer | None = None
    id: ReadOnly[Integer | None] = None
    type: ReadOnly[str | None] = None


class ItemTagBody(Strict):
    """RequestItemTag."""

    tag: Integer


class ReleaseBody(Strict):
    """RequestRelease; read-only members of a GET body are ignored."""

    name: Name | None = None
    description: Text | None = None
    releaseDate: Annotated[str, StringConstraints(max_length=40)] | None = None
    project: Integer | None = None
    id: ReadOnly[Integer | None] = None
    active: ReadOnly[bool | None] = None
    archived: ReadOnly[bool | None] = None
    itemCount: ReadOnly[Integer | None] = None
    type: ReadOnly[str | None] = None


class CommentTextBody(Strict):
    """RequestCommentBody."""

    text: Annotated[str, StringConstraints(min_length=1, max_length=65535)]


class CommentLocationBody(Strict):
    """RequestCommentLocation."""

    item: Integer | None = None
    project: Integer | None = None


class CommentBody(Strict):
    """RequestComment."""

    body: CommentTextBody
    inReplyTo: Integer | None = None
    commentType: Annotated[str, StringConstraints(max_length=32)] | None = None
    location: CommentLocationBody | None = None


class SyncedItemBody(Strict):
    """RequestItemSyncedItem."""

    item: Integer


class TransitionBody(Strict):
    """RequestTransition."""

    transitionId: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    comment: Text | None = None


class LinkBody(Strict):
    """RequestLink; ``id`` and ``type`` of a GET body are ignored."""

    url: Annotated[str, StringConstraints(min_length=1, max_length=2048)]
    description: Text | None = None
    id: ReadOnly[Integer | None] = None
    type: ReadOnly[str | None] = None


class DuplicateBody(Strict):
    """DuplicateConfig."""

    includeTags: bool = False
    includeAttachments: bool = False
    includeLinks: bool = False


class FilterBody(Strict):
    """A new filter (labs): the Filter record without id and author."""

    name: Name
    projectScope: Literal["ALL", "CURRENT", "SPECIFIED"] = "CURRENT"
    specifiedProject: Integer | None = None
    filterQuery: JsonObject
    public: bool = False


class FavoriteFilterBody(Strict):
    """A filter to add to the caller's favourites."""

    filter: Integer


class MoveParent(Strict):
    """RequestMoveParent."""

    project: Integer


class MoveBody(Strict):
    """RequestMoveLocation."""

    parent: MoveParent


class TreeLocationBody(Strict):
    """``PUT /items/treelocation``: the item, its new parent and the sibling it follows.

    The contract names this operation but shows no payload; this shape is Plumbline's.
    ``peer`` is the sibling the item goes right after; without it the item goes first.
    """

    item: Integer
    parent: ItemParent
    peer: Integer | None = None


class CategoryBody(Strict):
    """A new category path element."""

    name: Name
    parent: Integer | None = None


class VisibilityBody(Strict):
    """Whether a category path is shown."""

    visible: bool


class ItemCategoriesBody(Strict):
    """Categories to apply to an item and to remove from it."""

    add: list[Integer] = Field(default_factory=list)
    remove: list[Integer] = Field(default_factory=list)


class _TestRecordBody(Strict):
    """The members of a test record's GET ``data`` a client cannot set: accepted, ignored."""

    id: ReadOnly[Integer | None] = None
    documentKey: ReadOnly[str | None] = None
    globalId: ReadOnly[str | None] = None
    itemType: ReadOnly[Integer | None] = None
    createdDate: ReadOnly[str | None] = None
    modifiedDate: ReadOnly[str | None] = None
    lastActivityDate: ReadOnly[str | None] = None
    createdBy: ReadOnly[Integer | None] = None
    modifiedBy: ReadOnly[Integer | None] = None
    resources: ReadOnly[dict[str, Any] | None] = None
    type: ReadOnly[str | None] = None


class TestPlanBody(_TestRecordBody):
    """RequestTestPlan: ``project`` only on POST (where it is required)."""

    __test__ = False

    project: RecordId | None = None
    fields: JsonObject = Field(default_factory=dict)
    archived: ReadOnly[bool | None] = None
    lock: ReadOnly[dict[str, Any] | None] = None


TestRunStatus = Literal["NOT_RUN", "PASSED", "FAILED", "BLOCKED", "INPROGRESS"]


class GenerationConfig(Strict):
    """TestRunGenerationConfig: which test groups' cases get runs, and (after the first
    cycle of the plan) which statuses in the previous cycle; absent means all."""

    testGroupsToInclude: list[RecordId] | None = None
    testRunStatusesToInclude: list[TestRunStatus] | None = None


class TestCycleBody(_TestRecordBody):
    """RequestTestCycle: ``fields`` with name, startDate and endDate (yyyy-MM-dd)."""

    __test__ = False

    fields: JsonObject = Field(default_factory=dict)
    testRunGenerationConfig: GenerationConfig | None = None
    project: ReadOnly[Integer | None] = None


class TestRunBody(_TestRecordBody):
    """RequestTestRun: only the execution fields of ``fields`` are changed.

    Scripts PUT back a whole GET ``data`` object: its other members, and members this
    model does not know, are ignored rather than refused.
    """

    __test__ = False
    model_config = ConfigDict(extra="ignore", strict=True, populate_by_name=True)

    fields: JsonObject = Field(default_factory=dict)
    project: ReadOnly[Integer | None] = None
    testCaseVersionNumber: ReadOnly[Integer | None] = None
    sortOrderFromTestGroup: ReadOnly[Integer | None] = None
    testGroup: ReadOnly[list[Integer] | None] = None
    lock: ReadOnly[dict[str, Any] | None] = None


class TestGroupBody(Strict):
    """RequestTestGroup."""

    __test__ = False

    name: Name
    assignedTo: RecordId | None = None
    id: ReadOnly[Integer | None] = None
    type: ReadOnly[str | None] = None


class TestGroupTestCaseBody(Strict):
    """RequestTestGroupTestCase: an existing test case."""

    __test__ = False

    testCase: RecordId


#: The most test cases one request adds to a group.
MAX_GROUP_CASES = 1000


class TestGroupTestCasesBody(Strict):
    """Existing test cases to add to a group at its end, in this order (labs)."""

    __test__ = False

    testCases: list[RecordId] = Field(min_length=1, max_length=MAX_GROUP_CASES)


class ArchivedBody(Strict):
    """RequestArchivedStatus."""

    archived: bool


class PatchOperation(TypedDict):
    """An RFC 6902 operation on the item's PUT request object (``/fields/name``)."""

    op: Literal["add", "replace", "remove"]
    path: str
    value: NotRequired[Any]


class RunUpdate(TypedDict):
    """The new execution fields of one test run of a bulk update."""

    id: Integer
    fields: dict[str, Any]


class ItemPatch(TypedDict):
    """The operations for one item of a bulk PATCH."""

    id: Integer
    operations: list[PatchOperation]


class AttachmentBody(Strict):
    """RequestAttachment: ``fields`` holds ``name`` (required) and ``description``."""

    fields: JsonObject = Field(default_factory=dict)


class ItemAttachmentBody(Strict):
    """RequestItemAttachment: an existing attachment of the same project."""

    attachment: RecordId


class BaselineOriginBody(Strict):
    """BaselineOrigin: the project, and at most one of an item (with the items under
    it), a filter or a release; ``items`` (beyond the contract) names a set of items."""

    project: RecordId | None = None
    item: RecordId | None = None
    filter: RecordId | None = None
    release: RecordId | None = None
    items: list[RecordId] = Field(default_factory=list, max_length=100_000)


class BaselineBody(Strict):
    """A new baseline: its name, description, project and origin (without one, every
    item of the project, as since 8.86)."""

    name: Name
    description: Text = ""
    project: RecordId | None = None
    origin: BaselineOriginBody | None = None
    id: ReadOnly[Integer | None] = None
    createdDate: ReadOnly[str | None] = None
    createdBy: ReadOnly[Integer | None] = None
    type: ReadOnly[str | None] = None


class BaselineUpdateBody(Strict):
    """A baseline's new name and description; the rest of a Baseline as read may be sent
    back and is ignored (what a baseline holds never changes)."""

    name: Name
    description: Text = ""
    id: ReadOnly[Integer | None] = None
    project: ReadOnly[Integer | None] = None
    origin: ReadOnly[JsonObject | None] = None
    folder: ReadOnly[Integer | None] = None
    createdDate: ReadOnly[str | None] = None
    createdBy: ReadOnly[Integer | None] = None
    type: ReadOnly[str | None] = None


class BaselineFolderBody(Strict):
    """A new baseline folder: its name, project, and the folder it goes in (if any)."""

    name: Name
    project: RecordId
    parent: RecordId | None = None
    id: ReadOnly[Integer | None] = None
    type: ReadOnly[str | None] = None


class BaselineMoveBody(Strict):
    """Which baseline goes into which folder (``folder`` null or absent: the top)."""

    baseline: RecordId
    folder: RecordId | None = None


ChangeEventType = Literal["CREATE", "UPDATE", "DELETE", "PUBLIC", "BATCH_SUMMARY"]
Url = Annotated[str, StringConstraints(min_length=1, max_length=2000)]
Description = Annotated[str, StringConstraints(max_length=2000)]


class WebhookChanges(Strict):
    """The members of a webhook that a PATCH may change (each optional: what is given
    changes, lists are replaced whole)."""

    url: Url | None = None
    description: Description | None = None
    active: bool | None = None
    includeObject: bool | None = None
    objectTypes: list[Name] | None = Field(default=None, max_length=64)
    eventTypes: list[ChangeEventType] | None = Field(default=None, max_length=8)
    projects: list[RecordId] | None = Field(default=None, max_length=200)
    itemTypes: list[RecordId] | None = Field(default=None, max_length=200)


class WebhookBody(Strict):
    """A new webhook (labs): where to deliver, and which changes (the change feed's
    filters; none given: every change its owner may read of the projects named)."""

    url: Url
    description: Description = ""
    active: bool = True
    #: Whether a delivery carries the changed record as GET answers it to the owner.
    includeObject: bool = True
    objectTypes: list[Name] = Field(default_factory=list, max_length=64)
    eventTypes: list[ChangeEventType] = Field(default_factory=list, max_length=8)
    projects: list[RecordId] = Field(default_factory=list, max_length=200)
    itemTypes: list[RecordId] = Field(default_factory=list, max_length=200)


class RedeliveryBody(Strict):
    """A change to send to a webhook again: its event id (a delivery's webhook-id)."""

    event: Annotated[str, StringConstraints(min_length=1, max_length=64)]


class ReportBody(Strict):
    """A report to make (labs): the project, the file's format and the report's parameters
    (``GET /reports/metadata`` lists them)."""

    project: RecordId
    #: The report's first format when left out: XLSX, or REQIF for ``reqif-export``.
    format: Literal["XLSX", "CSV", "HTML", "REQIF", "REQIFZ"] | None = None
    parameters: dict[str, Any] = Field(default_factory=dict, max_length=32)
