"""How each record looks on the wire (camelCase, with its ``type``): the types are in
``records/``.

A record's plain members come from its message by their wire names
(``rpc.wire_members``): a proto field is on the wire under its JSON name, an ``optional``
one only when set. Written out here is only what the contract has that the message does
not: a member it names differently (``rename``), one left out (``leave_out``), and the
nested or computed members (dates, location, lock, fields).
tests/unit/gateway/test_representations.py holds each to its ``records`` type.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar, cast

import orjson
from google.protobuf.message import Message

from plumbline.api.activity.v1 import activity_pb2
from plumbline.api.attachments.v1 import attachments_pb2
from plumbline.api.baselines.v1 import baselines_pb2
from plumbline.api.hooks.v1 import hooks_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.reports.v1 import reports_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.errors import Internal
from plumbline.common.rpc import wire_members
from plumbline.common.snapshots import parse_snapshot
from plumbline.gateway import records

_Record = TypeVar("_Record", items_pb2.Item, testmgmt_pb2.TestRecord, attachments_pb2.Attachment)


def _members(
    message: Message,
    type_: str,
    leave_out: frozenset[str] = frozenset(),
    rename: Mapping[str, str] | None = None,
) -> Any:
    """The record's plain members (``rpc.wire_members``) and its ``type``."""
    return {**wire_members(message, leave_out, rename=rename), "type": type_}


def user(message: identity_pb2.User) -> records.User:
    """A User."""
    return cast(records.User, _members(message, "users"))


def credentials(message: identity_pb2.ClientCredentials) -> records.ApiCredentials:
    """ApiCredentials, with the secret (shown once)."""
    return cast(records.ApiCredentials, _members(message, "apicredentials", rename=_CREDENTIALS))


def credentials_info(message: identity_pb2.CredentialsInfo) -> records.ApiCredentialsInfo:
    """ApiCredentialsInfo: never the secret."""
    body = _members(message, "apicredentials", rename=_CREDENTIALS)
    return cast(records.ApiCredentialsInfo, body)


_CREDENTIALS = {"userId": "user"}


def permission(message: identity_pb2.Permission) -> records.Permission:
    """A permission entry."""
    return cast(records.Permission, _members(message, "permissions", rename=_PERMISSION))


_PERMISSION = {"group": "userGroup"}


def group(message: identity_pb2.Group) -> records.UserGroup:
    """A UserGroup."""
    return cast(records.UserGroup, _members(message, "usergroups"))


def project(message: items_pb2.Project) -> records.Project:
    """A Project."""
    body = _members(message, "projects")
    body["fields"] = json.loads(message.fields_json or b"{}")
    return cast(records.Project, body)


def activity(message: activity_pb2.ActivityRecord) -> records.Activity:
    """An Activity."""
    return cast(records.Activity, _members(message, "activities", _NOT_ACTIVITY_MEMBERS))


_NOT_ACTIVITY_MEMBERS = frozenset({"project"})  # what the feed is filtered by


def change(message: hooks_pb2.Change) -> records.Change:
    """A Change of the change feed (its ``type`` is the event's, not a record family's)."""
    return cast(records.Change, wire_members(message))


def webhook(message: hooks_pb2.Webhook) -> records.Webhook:
    """A Webhook (its filters are lists)."""
    return cast(records.Webhook, {**wire_members(message, nested=True), "type": "webhooks"})


def delivery(message: hooks_pb2.Delivery) -> records.Delivery:
    """A Delivery of a webhook's log."""
    return cast(records.Delivery, wire_members(message))


def latest_run(message: testmgmt_pb2.LatestResult) -> records.LatestRun:
    """A test case's LatestRun (the test case is the caller's key)."""
    return cast(records.LatestRun, wire_members(message, _TEST_CASE, rename=_LATEST_RUN))


_TEST_CASE = frozenset({"testCase"})
_LATEST_RUN = {"run": "id", "status": "testRunStatus", "runs": "runCount", "cycle": "testCycle"}


def report(message: reports_pb2.Report) -> records.ReportMetadata:
    """A ReportMetadata (a parameter's choices only where it has them)."""
    body = wire_members(message, nested=True)
    for parameter in body["parameters"]:
        if not parameter["choices"]:
            del parameter["choices"]
    return cast(records.ReportMetadata, {**body, "type": "reports"})


def report_work(message: reports_pb2.Work, file: str | None = None) -> records.ReportWork:
    """A ReportWork, with where its ``file`` is once it is DONE."""
    body = _members(message, "reportworks", _PARAMETERS, _WORK)
    body["parameters"] = orjson.loads(message.parameters_json or b"{}")
    if file is not None:
        body["file"] = file
    return cast(records.ReportWork, body)


_PARAMETERS = frozenset({"parametersJson"})
_WORK = {"id": "workId", "owner": "createdBy"}


def item_type(message: items_pb2.ItemType) -> records.ItemType:
    """An ItemType with its fields."""
    body = _members(message, "itemtypes")
    body["widgets"] = [{"name": w, "synchronize": False} for w in message.widgets]
    # Read-only fields are never written through the API (they are ignored in a body).
    body["fields"] = [
        {**wire_members(f), "readOnlyAllowApiOverwrite": False} for f in message.fields
    ]
    return cast(records.ItemType, body)


def pick_list(message: items_pb2.PickList) -> records.PickList:
    """A PickList."""
    return cast(records.PickList, _members(message, "picklists", rename=_PICK_LIST))


_PICK_LIST = {"kind": "pickListType"}


def pick_list_option(message: items_pb2.PickListOption) -> records.PickListOption:
    """A PickListOption."""
    return cast(records.PickListOption, _members(message, "picklistoptions"))


def rule_set(message: items_pb2.RuleSet) -> records.RelationshipRuleSet:
    """A RelationshipRuleSet with its rules."""
    body = wire_members(message, _NOT_RULE_SET_MEMBERS, nested=True)
    return cast(records.RelationshipRuleSet, {**body, "type": "relationshiprulesets"})


_NOT_RULE_SET_MEMBERS = frozenset({"projects"})  # the projects route lists them


def relationship_type(message: items_pb2.RelationshipType) -> records.RelationshipType:
    """A RelationshipType."""
    return cast(records.RelationshipType, _members(message, "relationshiptypes"))


def item(message: items_pb2.Item) -> records.Item:
    """An Item."""
    parent: records.Parent = (
        {"item": message.location.parent_item}
        if message.location.HasField("parent_item")
        else {"project": message.location.project}
    )
    location: records.Location = {
        "sortOrder": message.location.sort_order,
        "globalSortOrder": message.location.global_sort_order,
        "sequence": message.location.sequence,
        "parent": parent,
    }
    return cast(
        records.Item,
        {
            **wire_members(message, _NOT_ITEM_MEMBERS),
            "fields": json.loads(message.fields_json or b"{}"),
            "resources": {"self": {"allowed": list(message.allowed)}},
            "location": location,
            "lock": _lock(message.lock),
            "type": "items",
        },
    )


_NOT_ITEM_MEMBERS = frozenset({"version"})  # the history's, not the item's


def _lock(message: items_pb2.ItemLock | testmgmt_pb2.Lock | attachments_pb2.Lock) -> records.Lock:
    body: records.Lock = {"locked": message.locked}
    if message.last_locked_date:
        body["lastLockedDate"] = message.last_locked_date
    if message.HasField("locked_by"):
        body["lockedBy"] = message.locked_by
    return body


def _abstract(
    message: testmgmt_pb2.TestRecord | attachments_pb2.Attachment, leave_out: frozenset[str]
) -> dict[str, Any]:
    """The plain members of a test plan, cycle or run, or an attachment, and those every
    abstract item has."""
    return {
        **wire_members(message, leave_out),
        "fields": json.loads(message.fields_json or b"{}"),
        "resources": {"self": {"allowed": list(message.allowed)}},
    }


# The members of one kind of test record that the others do not have, and the history's
# version number.
_NOT_PLAN = frozenset(
    {
        "kind",
        "version",
        "testCaseVersionNumber",
        "testCaseCurrentVersionNumber",
        "testPlan",
        "testGroup",
        "sortOrderFromTestGroup",
    }
)
_NOT_CYCLE = _NOT_PLAN | {"archived"}
_NOT_RUN = frozenset(
    {"kind", "version", "archived", "testPlan", "testGroup", "testCaseCurrentVersionNumber"}
)
_NOT_ATTACHMENT = frozenset({"sha256", "version"})


def attachment(message: attachments_pb2.Attachment) -> records.Attachment:
    """An Attachment."""
    body = _abstract(message, _NOT_ATTACHMENT)
    return cast(records.Attachment, {**body, "lock": _lock(message.lock), "type": "attachments"})


def attachment_lock(message: attachments_pb2.Attachment) -> records.Lock:
    """An attachment's Lock."""
    return _lock(message.lock)


def test_plan(message: testmgmt_pb2.TestRecord) -> records.TestPlan:
    """A TestPlan."""
    body = _abstract(message, _NOT_PLAN)
    return cast(records.TestPlan, {**body, "lock": _lock(message.lock), "type": "testplans"})


def test_cycle(message: testmgmt_pb2.TestRecord) -> records.TestCycle:
    """A TestCycle."""
    return cast(records.TestCycle, {**_abstract(message, _NOT_CYCLE), "type": "testcycles"})


def test_run(message: testmgmt_pb2.TestRecord) -> records.TestRun:
    """A TestRun (``testCaseCurrentVersionNumber`` when its test case can be read)."""
    body = {
        **_abstract(message, _NOT_RUN),
        "testGroup": [message.test_plan, message.test_group],
        "lock": _lock(message.lock),
        "type": "testruns",
    }
    if message.test_case_current_version_number:
        body["testCaseCurrentVersionNumber"] = message.test_case_current_version_number
    return cast(records.TestRun, body)


def test_record(
    message: testmgmt_pb2.TestRecord,
) -> records.TestPlan | records.TestCycle | records.TestRun:
    """A test plan, cycle or run, by its kind."""
    if message.kind == testmgmt_pb2.PLAN:
        return test_plan(message)
    if message.kind == testmgmt_pb2.CYCLE:
        return test_cycle(message)
    return test_run(message)


def test_group(message: testmgmt_pb2.TestGroup) -> records.TestGroup:
    """A TestGroup (``assignedTo`` only when someone is)."""
    return cast(records.TestGroup, _members(message, "testgroups", _NOT_TEST_GROUP_MEMBERS))


_NOT_TEST_GROUP_MEMBERS = frozenset({"testPlan"})  # the path names it


def cycle_group(message: testmgmt_pb2.CycleGroup) -> records.TestCycleTestGroup:
    """A TestCycleTestGroup."""
    return cast(records.TestCycleTestGroup, _members(message, "testcycletestgroups"))


def relationship(message: items_pb2.Relationship) -> records.Relationship:
    """A Relationship."""
    return cast(records.Relationship, _members(message, "relationships"))


def link(message: items_pb2.Link) -> records.Link:
    """A Link."""
    return cast(records.Link, _members(message, "links"))


def item_filter(message: items_pb2.Filter) -> records.Filter:
    """A Filter."""
    body = _members(message, "filters")
    body["filterQuery"] = orjson.loads(message.filter_query_json or b"{}")
    return cast(records.Filter, body)


def workflow_transition(message: items_pb2.WorkflowTransition) -> records.WorkflowTransition:
    """A WorkflowTransition."""
    return cast(records.WorkflowTransition, _members(message, "workflowtransitions"))


def tag(message: items_pb2.Tag) -> records.Tag:
    """A Tag."""
    return cast(records.Tag, _members(message, "tags"))


def release(message: items_pb2.Release) -> records.Release:
    """A Release."""
    return cast(records.Release, _members(message, "releases"))


def comment(message: items_pb2.Comment) -> records.Comment:
    """A Comment: its text is ``body.text``, and where it is said ``location``."""
    body = _members(message, "comments", _NOT_COMMENT_MEMBERS)
    body["body"] = {"text": message.text}
    body["location"] = wire_members(message, _NOT_COMMENT_LOCATION)
    return cast(records.Comment, body)


_NOT_COMMENT_LOCATION = frozenset(
    {"id", "inReplyTo", "createdDate", "createdBy", "modifiedBy", "deleted", "status"}
    | {"text", "commentType"}
)
_NOT_COMMENT_MEMBERS = frozenset({"text", "item", "project"})


def lock(item_body: records.Item) -> records.Lock:
    """An item's Lock (taken from its record)."""
    return item_body["lock"]


def record_lock(message: testmgmt_pb2.TestRecord) -> records.Lock:
    """A test plan's or run's Lock."""
    return _lock(message.lock)


def item_version(message: baselines_pb2.Version) -> records.ItemVersion:
    """A Version."""
    body = _members(message, "versions", _NOT_VERSION_MEMBERS)
    body["versionedItem"] = [message.item, message.version_number]
    return cast(records.ItemVersion, body)


# The project and the record kept are read through the versioned record.
_NOT_VERSION_MEMBERS = frozenset({"project", "recordType", "snapshotJson", "currentVersion"})


def versioned_record(message: baselines_pb2.Version) -> dict[str, Any]:
    """The record kept with a version (VersionedItem, VersionedTestRun, …): the owner's
    record then, its version and the current one, readable only."""
    if message.record_type == items_pb2.Item.DESCRIPTOR.full_name:
        body: dict[str, Any] = dict(item(_snapshot(message, items_pb2.Item())))
    elif message.record_type == testmgmt_pb2.TestRecord.DESCRIPTOR.full_name:
        body = dict(test_record(_snapshot(message, testmgmt_pb2.TestRecord())))
    elif message.record_type == attachments_pb2.Attachment.DESCRIPTOR.full_name:
        body = dict(attachment(_snapshot(message, attachments_pb2.Attachment())))
    else:
        raise Internal(f"A version of item {message.item} has an unknown record type.")
    body["resources"] = {"self": {"allowed": ["GET"]}}
    body["version"] = message.version_number
    if message.HasField("current_version"):
        body["currentVersion"] = message.current_version
    return body


def _snapshot(message: baselines_pb2.Version, record: _Record) -> _Record:
    parse_snapshot(message.snapshot_json, record)
    return record


def versioned_relationship(
    message: baselines_pb2.VersionedRelationship,
) -> records.VersionedRelationship:
    """A VersionedRelationship."""
    body: records.VersionedRelationship = {
        "id": message.id,
        "fromItem": [message.from_item, message.from_version],
        "toItem": [message.to_item, message.to_version],
        "suspect": message.suspect,
        "type": "relationships",
    }
    if message.relationship_type:
        body["relationshipType"] = message.relationship_type
    return body


def baseline(message: baselines_pb2.Baseline) -> records.Baseline:
    """A Baseline."""
    body = _members(message, "baselines")
    body["origin"] = {"project": message.project, **wire_members(message.origin)}
    return cast(records.Baseline, body)


def baseline_folder(message: baselines_pb2.Folder) -> records.BaselineFolder:
    """A BaselineFolder."""
    return cast(records.BaselineFolder, _members(message, "baselinefolders"))


def baseline_item(message: baselines_pb2.BaselineItem) -> dict[str, Any]:
    """A BaselineItem: the item at its version in the baseline, and where it was then."""
    body = versioned_record(message.version)
    parent: records.BaselineParent = (
        {"item": [message.parent_item, message.parent_version]}
        if message.HasField("parent_item")
        else {"project": message.project}
    )
    body["baseline"] = message.baseline
    body["baselineLocation"] = {"sequence": message.sequence, "parent": parent}
    return body


def baseline_change(message: baselines_pb2.Change) -> records.BaselineChange:
    """A BaselineChange."""
    body = {**wire_members(message, nested=True), "type": "baselinechanges"}
    if message.change != "CHANGED":
        del body["changedFields"]  # only a changed item has them
    return cast(records.BaselineChange, body)


def ingest_answer(message: testmgmt_pb2.IngestReply) -> records.IngestAnswer:
    """An IngestAnswer: what a JUnit report did to a test cycle."""
    return cast(records.IngestAnswer, wire_members(message, nested=True, rename=_INGEST_ANSWER))


_INGEST_ANSWER = {"matched.status": "testRunStatus"}


def category(message: items_pb2.Category) -> records.Category:
    """A Category (a category path)."""
    return cast(records.Category, _members(message, "categories"))
