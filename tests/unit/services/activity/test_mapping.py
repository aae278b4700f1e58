"""Which events become activities, and how they read."""

from __future__ import annotations

import pytest

from plumbline.common.changes import affected_items, describe, is_item_deletion
from plumbline.common.events import Event


@pytest.mark.parametrize(
    ("event_type", "event", "object_type"),
    [
        ("identity.user.created", "CREATE", "USER"),
        ("identity.user.deactivated", "UPDATE", "USER"),
        ("identity.group.member_added", "UPDATE", "USER"),
        ("identity.group.deleted", "DELETE", "USER"),
        ("identity.apiclient.created", "CREATE", "USER"),
        ("identity.apiclient.revoked", "DELETE", "USER"),
        ("identity.corsdomains.updated", "UPDATE", "MISCELLANEOUS"),
        ("items.project.updated", "UPDATE", "PROJECT"),
        ("items.item.deleted", "DELETE", "ITEM"),
    ],
)
def test_known_events(event_type: str, event: str, object_type: str) -> None:
    draft = describe(Event(event_type, actor=1, object_ids=[5], payload={"name": "X", "user": 3}))
    assert draft is not None
    assert (draft.event_type, draft.object_type) == (event, object_type)
    assert draft.action == {"CREATE": "Created", "UPDATE": "Updated", "DELETE": "Deleted"}[event]
    assert draft.details


def test_items_carry_their_id_and_type() -> None:
    draft = describe(Event("items.item.created", actor=1, object_ids=[42], payload={"itemType": 7}))
    assert draft is not None
    assert draft.item == 42
    assert draft.item_type == 7


@pytest.mark.parametrize(
    "event_type",
    ["identity.signingkey.created", "billing.invoice.created", "items.project.archived"],
)
def test_other_events_are_not_history(event_type: str) -> None:
    assert describe(Event(event_type, actor=1)) is None


@pytest.mark.parametrize(
    ("event_type", "organization"),
    [
        ("identity.user.created", True),
        ("identity.group.created", True),
        ("identity.apiclient.revoked", True),
        ("identity.permission.created", True),
        ("items.project.created", False),
        ("items.tag.deleted", False),
    ],
)
def test_identity_changes_belong_to_the_organization_feed(
    event_type: str, organization: bool
) -> None:
    draft = describe(Event(event_type, actor=1, project=4, payload={"name": "X"}))
    assert draft is not None
    assert draft.organization is organization


def test_credentials_read_as_credentials() -> None:
    event = Event("identity.apiclient.revoked", actor=1, payload={"name": "ci", "user": 3})
    draft = describe(event)
    assert draft is not None
    assert draft.details == "API credentials ci revoked"


def test_a_restore_reads_as_an_update_of_the_item() -> None:
    event = Event("items.item.restored", actor=1, object_ids=[42], payload={"name": "R"})
    draft = describe(event)
    assert draft is not None
    assert (draft.event_type, draft.object_type, draft.item) == ("UPDATE", "ITEM", 42)
    assert draft.details == "item R restored"
    assert draft.subtree == ()


def test_an_item_deletion_keeps_the_items_deleted_with_it() -> None:
    event = Event(
        "items.item.deleted", actor=1, object_ids=[42], payload={"subtree": [43, 44, "x"]}
    )
    draft = describe(event)
    assert draft is not None
    assert draft.subtree == (43, 44)
    tag = describe(Event("items.tag.deleted", actor=1, object_ids=[7], payload={"subtree": [1]}))
    assert tag is not None
    assert tag.subtree == ()


@pytest.mark.parametrize(
    ("entity", "to_project", "related"),
    [
        ("relationship", 9, 9),  # into another project: readers need it too
        ("relationship", 3, None),  # within the activity's project
        ("relationship", None, None),  # not said (events written before)
        ("relationship", "9", None),
        ("comment", 9, None),  # only a relationship names another project's record
    ],
)
def test_a_relationship_into_another_project_names_that_project(
    entity: str, to_project: object, related: int | None
) -> None:
    event = Event(
        f"items.{entity}.created",
        actor=1,
        project=3,
        object_ids=[5],
        payload={"fromItem": 10, "toItem": 20, "name": "10 to 20", "toProject": to_project},
    )
    draft = describe(event)
    assert draft is not None
    assert draft.related_project == related


@pytest.mark.parametrize(
    ("object_type", "item", "subtree", "affected"),
    [
        ("ITEM", 42, (43, 44), [42, 43, 44]),
        ("ITEM", 42, (), [42]),
        ("COMMENT", 42, (), [42]),
        ("ITEM_TAG", 42, (), [42]),
        ("URL", 42, (), [42]),
        ("TEST_PLAN", 42, (), []),
        ("ITEM_ATTACHMENT", 42, (), []),
        ("RELATIONSHIP", None, (), []),
        ("PROJECT", None, (), []),
    ],
)
def test_affected_items(
    object_type: str, item: int | None, subtree: tuple[int, ...], affected: list[int]
) -> None:
    assert affected_items(object_type, item, subtree) == affected


def test_only_item_deletions_are_restorable() -> None:
    assert is_item_deletion("DELETE", "ITEM", 42)
    assert not is_item_deletion("UPDATE", "ITEM", 42)
    assert not is_item_deletion("DELETE", "TAG", None)
    assert not is_item_deletion("DELETE", "TEST_PLAN", 42)
