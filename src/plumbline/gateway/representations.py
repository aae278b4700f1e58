"""How each record looks on the wire (camelCase, with its ``type``): the types are in
``records/``."""

from __future__ import annotations

import json
from typing import Any, TypeVar, cast

from plumbline.api.activity.v1 import activity_pb2
from plumbline.api.attachments.v1 import attachments_pb2
from plumbline.api.baselines.v1 import baselines_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.errors import Internal
from plumbline.common.rpc import wire_members
from plumbline.common.snapshots import parse_snapshot
from plumbline.gateway import records

_Record = TypeVar("_Record", items_pb2.Item, testmgmt_pb2.TestRecord, attachments_pb2.Attachment)


def user(message: identity_pb2.User) -> records.User:
    """A User."""
    return {
        "id": message.id,
        "username": message.username,
        "firstName": message.first_name,
        "lastName": message.last_name,
        "email": message.email,
        "phone": message.phone,
        "title": message.title,
        "location": message.location,
        "licenseType": message.license_type,
        "avatarUrl": message.avatar_url,
        "active": message.active,
        "type": "users",
    }


def permission(message: identity_pb2.Permission) -> records.Permission:
    """A permission entry."""
    body: records.Permission = {
        "id": message.id,
        "project": message.project,
        "role": cast(Any, message.role),
        "type": "permissions",
    }
    if message.HasField("user"):
        body["user"] = message.user
    else:
        body["userGroup"] = message.group
    return body


def group(message: identity_pb2.Group) -> records.UserGroup:
    """A UserGroup."""
    body: records.UserGroup = {
        "id": message.id,
        "name": message.name,
        "description": message.description,
        "type": "usergroups",
    }
    if message.HasField("project"):
        body["project"] = message.project
    return body


def project(message: items_pb2.Project) -> records.Project:
    """A Project."""
    body: records.Project = {
        "id": message.id,
        "isFolder": message.is_folder,
        "createdDate": message.created_date,
        "modifiedDate": message.modified_date,
        "createdBy": message.created_by,
        "modifiedBy": message.modified_by,
        "fields": json.loads(message.fields_json or b"{}"),
        "type": "projects",
    }
    if message.project_key:
        body["projectKey"] = message.project_key
    if message.HasField("parent"):
        body["parent"] = message.parent
    return body


def activity(message: activity_pb2.ActivityRecord) -> records.Activity:
    """An Activity."""
    body: records.Activity = {
        "id": message.id,
        "date": message.date,
        "details": message.details,
        "action": message.action,
        "userComment": message.user_comment,
        "eventType": message.event_type,
        "objectType": message.object_type,
        "type": "activities",
    }
    if message.HasField("user"):
        body["user"] = message.user
    if message.HasField("item"):
        body["item"] = message.item
    return body


def item_type(message: items_pb2.ItemType) -> records.ItemType:
    """An ItemType with its fields."""
    fields = []
    for f in message.fields:
        field: records.ItemTypeField = {
            "id": f.id,
            "name": f.name,
            "label": f.label,
            "fieldType": f.field_type,
            "readOnly": f.read_only,
            "required": f.required,
            "triggerSuspect": f.trigger_suspect,
            "synchronize": f.synchronize,
        }
        if f.HasField("pick_list"):
            field["pickList"] = f.pick_list
        if f.text_type:
            field["textType"] = f.text_type
        if f.HasField("item_type"):
            field["itemType"] = f.item_type
        fields.append(field)
    return {
        "id": message.id,
        "typeKey": message.type_key,
        "display": message.display,
        "displayPlural": message.display_plural,
        "description": message.description,
        "image": message.image,
        "category": message.category,
        "widgets": [{"name": w, "synchronize": False} for w in message.widgets],
        "fields": fields,
        "system": message.system,
        "type": "itemtypes",
    }


def pick_list(message: items_pb2.PickList) -> records.PickList:
    """A PickList."""
    return {
        "id": message.id,
        "name": message.name,
        "description": message.description,
        "pickListType": message.kind,
        "type": "picklists",
    }


def pick_list_option(message: items_pb2.PickListOption) -> records.PickListOption:
    """A PickListOption."""
    return {
        "id": message.id,
        "name": message.name,
        "description": message.description,
        "value": message.value,
        "default": message.default,
        "active": message.active,
        "color": message.color,
        "sortOrder": message.sort_order,
        "pickList": message.pick_list,
        "type": "picklistoptions",
    }


def relationship_type(message: items_pb2.RelationshipType) -> records.RelationshipType:
    """A RelationshipType."""
    return {
        "id": message.id,
        "name": message.name,
        "isDefault": message.is_default,
        "type": "relationshiptypes",
    }


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
    # Plain members come from the message by their wire names (see ``rpc.wire_members``);
    # tests/unit/gateway/test_representations.py holds them to ``records.Item``.
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


def _test_record(
    message: testmgmt_pb2.TestRecord | attachments_pb2.Attachment,
) -> records.TestRecordBase:
    """The members every test plan, cycle and run, and every attachment, has."""
    return {
        "id": message.id,
        "documentKey": message.document_key,
        "globalId": message.global_id,
        "project": message.project,
        "itemType": message.item_type,
        "createdDate": message.created_date,
        "modifiedDate": message.modified_date,
        "lastActivityDate": message.last_activity_date,
        "createdBy": message.created_by,
        "modifiedBy": message.modified_by,
        "fields": json.loads(message.fields_json or b"{}"),
        "resources": {"self": {"allowed": list(message.allowed)}},
    }


def attachment(message: attachments_pb2.Attachment) -> records.Attachment:
    """An Attachment."""
    return {
        **_test_record(message),
        "lock": _lock(message.lock),
        "fileName": message.file_name,
        "mimeType": message.mime_type,
        "fileSize": message.file_size,
        "type": "attachments",
    }


def attachment_lock(message: attachments_pb2.Attachment) -> records.Lock:
    """An attachment's Lock."""
    return _lock(message.lock)


def test_plan(message: testmgmt_pb2.TestRecord) -> records.TestPlan:
    """A TestPlan."""
    return {
        **_test_record(message),
        "archived": message.archived,
        "lock": _lock(message.lock),
        "type": "testplans",
    }


def test_cycle(message: testmgmt_pb2.TestRecord) -> records.TestCycle:
    """A TestCycle."""
    return {**_test_record(message), "type": "testcycles"}


def test_run(message: testmgmt_pb2.TestRecord) -> records.TestRun:
    """A TestRun."""
    return {
        **_test_record(message),
        "testCaseVersionNumber": message.test_case_version_number,
        "sortOrderFromTestGroup": message.sort_order_from_test_group,
        "testGroup": [message.test_plan, message.test_group],
        "lock": _lock(message.lock),
        "type": "testruns",
    }


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
    body: records.TestGroup = {"id": message.id, "name": message.name, "type": "testgroups"}
    if message.HasField("assigned_to"):
        body["assignedTo"] = message.assigned_to
    return body


def cycle_group(message: testmgmt_pb2.CycleGroup) -> records.TestCycleTestGroup:
    """A TestCycleTestGroup."""
    body: records.TestCycleTestGroup = {
        "testGroup": message.test_group,
        "name": message.name,
        "testCycle": message.test_cycle,
        "type": "testcycletestgroups",
    }
    if message.HasField("assigned_to"):
        body["assignedTo"] = message.assigned_to
    return body


def relationship(message: items_pb2.Relationship) -> records.Relationship:
    """A Relationship."""
    return cast(records.Relationship, {**wire_members(message), "type": "relationships"})


def tag(message: items_pb2.Tag) -> records.Tag:
    """A Tag."""
    return {"id": message.id, "name": message.name, "project": message.project, "type": "tags"}


def release(message: items_pb2.Release) -> records.Release:
    """A Release."""
    body: records.Release = {
        "id": message.id,
        "name": message.name,
        "description": message.description,
        "project": message.project,
        "active": message.active,
        "archived": message.archived,
        "itemCount": message.item_count,
        "type": "releases",
    }
    if message.release_date:
        body["releaseDate"] = message.release_date
    return body


def comment(message: items_pb2.Comment) -> records.Comment:
    """A Comment."""
    location: records.CommentLocation = {}
    if message.HasField("item"):
        location["item"] = message.item
    if message.HasField("project"):
        location["project"] = message.project
    body: records.Comment = {
        "id": message.id,
        "createdDate": message.created_date,
        "createdBy": message.created_by,
        "modifiedBy": message.modified_by,
        "deleted": message.deleted,
        "status": message.status,
        "body": {"text": message.text},
        "commentType": message.comment_type,
        "location": location,
        "type": "comments",
    }
    if message.HasField("in_reply_to"):
        body["inReplyTo"] = message.in_reply_to
    return body


def lock(item_body: records.Item) -> records.Lock:
    """An item's Lock (taken from its record)."""
    return item_body["lock"]


def record_lock(message: testmgmt_pb2.TestRecord) -> records.Lock:
    """A test plan's or run's Lock."""
    return _lock(message.lock)


def item_version(message: baselines_pb2.Version) -> records.ItemVersion:
    """A Version."""
    body: records.ItemVersion = {
        "versionedItem": [message.item, message.version_number],
        "item": message.item,
        "versionNumber": message.version_number,
        "changeDetails": message.change_details,
        "comment": message.comment,
        "createdDate": message.created_date,
        "type": "versions",
    }
    if message.HasField("created_by"):
        body["createdBy"] = message.created_by
    return body


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
    origin: records.BaselineOrigin = {"project": message.project}
    if message.origin.HasField("item"):
        origin["item"] = message.origin.item
    if message.origin.HasField("filter"):
        origin["filter"] = message.origin.filter
    if message.origin.HasField("release"):
        origin["release"] = message.origin.release
    body: records.Baseline = {
        "id": message.id,
        "name": message.name,
        "description": message.description,
        "createdDate": message.created_date,
        "project": message.project,
        "origin": origin,
        "type": "baselines",
    }
    if message.HasField("created_by"):
        body["createdBy"] = message.created_by
    if message.HasField("folder"):
        body["folder"] = message.folder
    return body


def baseline_folder(message: baselines_pb2.Folder) -> records.BaselineFolder:
    """A BaselineFolder."""
    body: records.BaselineFolder = {
        "id": message.id,
        "name": message.name,
        "project": message.project,
        "createdDate": message.created_date,
        "type": "baselinefolders",
    }
    if message.HasField("parent"):
        body["parent"] = message.parent
    if message.HasField("created_by"):
        body["createdBy"] = message.created_by
    return body


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
    body: records.BaselineChange = {
        "kind": "ITEM" if message.kind == "ITEM" else "RELATIONSHIP",
        "change": cast(Any, message.change),
        "id": message.id,
        "type": "baselinechanges",
    }
    if message.kind == "ITEM":
        body["fromVersion"] = message.from_version
        body["toVersion"] = message.to_version
        if message.change == "CHANGED":
            body["changedFields"] = list(message.changed_fields)
    else:
        body["fromItem"] = message.from_item
        body["toItem"] = message.to_item
        if message.HasField("relationship_type"):
            body["relationshipType"] = message.relationship_type
    return body


def category(message: items_pb2.Category) -> records.Category:
    """A Category (a category path)."""
    body: records.Category = {
        "id": message.id,
        "name": message.name,
        "path": message.path,
        "visible": message.visible,
        "type": "categories",
    }
    if message.HasField("parent"):
        body["parent"] = message.parent
    return body
