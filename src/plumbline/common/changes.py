"""Which events are changes a person would read about (the activity feed, the change
feed of hooks), and how they read."""

from __future__ import annotations

from dataclasses import dataclass

from plumbline.common.events import Event

#: The contract's values of ``eventType`` and ``objectType`` (its reconstructed OpenAPI
#: enumerations).
EVENT_TYPES = ("CREATE", "UPDATE", "DELETE", "PUBLIC", "BATCH_SUMMARY")
OBJECT_TYPES = (
    "PROJECT",
    "ITEM",
    "USER",
    "RELATIONSHIP",
    "COMMENT",
    "ITEM_TAG",
    "TAG",
    "ITEM_ATTACHMENT",
    "URL",
    "TEST_RESULT",
    "BASELINE",
    "CHANGE_REQUEST",
    "REVIEW",
    "REVISION",
    "REVISION_ITEM",
    "TEST_PLAN",
    "TEST_CYCLE",
    "TEST_RUN",
    "INTEGRATION",
    "MISCELLANEOUS",
)

_EVENT_TYPES = {
    "created": "CREATE",
    "updated": "UPDATE",
    "activated": "UPDATE",
    "deactivated": "UPDATE",
    "member_added": "UPDATE",
    "member_removed": "UPDATE",
    "deleted": "DELETE",
    # A restored item (or relationship) is the same record again (its id, key and history
    # go on), not a new one.
    "restored": "UPDATE",
    "revoked": "DELETE",
    "linked": "UPDATE",
    "unlinked": "UPDATE",
}

_OBJECT_TYPES = {
    ("identity", "user"): "USER",
    # The contract's object types have no group kind: groups are user administration.
    ("identity", "group"): "USER",
    ("identity", "apiclient"): "USER",
    ("identity", "permission"): "PROJECT",
    ("identity", "corsdomains"): "MISCELLANEOUS",
    ("items", "project"): "PROJECT",
    ("items", "item"): "ITEM",
    ("items", "relationship"): "RELATIONSHIP",
    ("items", "tag"): "TAG",
    ("items", "itemtag"): "ITEM_TAG",
    ("items", "comment"): "COMMENT",
    ("items", "itemlink"): "URL",
    ("items", "release"): "MISCELLANEOUS",
    ("testmgmt", "testplan"): "TEST_PLAN",
    ("testmgmt", "testgroup"): "TEST_PLAN",
    ("testmgmt", "testcycle"): "TEST_CYCLE",
    ("testmgmt", "testrun"): "TEST_RUN",
    ("attachments", "attachment"): "ITEM_ATTACHMENT",
    ("baselines", "baseline"): "BASELINE",
}
#: Object types whose activities name the record in ``item``.
_RECORDS = ("ITEM", "TEST_PLAN", "TEST_CYCLE", "TEST_RUN", "TEST_RESULT", "ITEM_ATTACHMENT")

#: Object types whose ``item`` is the item (or abstract item) the change hangs on.
_HANGS_ON = ("COMMENT", "ITEM_TAG", "URL")

#: How details name an entity, where not by its object type.
_WHAT = {
    "group": "user group",
    "itemlink": "link",
    "apiclient": "API credentials",
    "permission": "project permission",
    "corsdomains": "CORS domains",
    "testgroup": "test group",
}

_ACTIONS = {"CREATE": "Created", "UPDATE": "Updated", "DELETE": "Deleted"}


@dataclass(frozen=True)
class ActivityDraft:
    """An activity before it is stored."""

    event_type: str
    object_type: str
    action: str
    details: str
    item: int | None
    item_type: int | None
    #: Part of the organisation feed (identity's changes), not of any project's.
    organization: bool
    #: An item deletion: the items deleted with the item.
    subtree: tuple[int, ...] = ()
    #: The project of another record the activity names, where that is not the
    #: activity's: a relationship's to-item's. Who may not read it does not see the
    #: activity (its details name the item).
    related_project: int | None = None


def describe(event: Event) -> ActivityDraft | None:
    """The activity an event stands for, or None for events that are not history."""
    object_type = _OBJECT_TYPES.get((event.source, event.entity))
    event_type = _EVENT_TYPES.get(event.action)
    if object_type is None or event_type is None:
        return None
    payload = event.payload
    if payload.get("generated"):
        return None  # a run a cycle made: the cycle's own activity tells it
    if object_type == "TEST_RUN" and payload.get("result"):
        object_type = "TEST_RESULT"
    label = payload.get("name") or payload.get("username") or ""
    what = _WHAT.get(event.entity, object_type.replace("_", " ").lower())
    verb = event.action.replace("_", " ")
    details = f"{what} {label!s} {verb}".replace("  ", " ").strip()
    if event.action in ("linked", "unlinked"):
        direction = "attached to" if event.action == "linked" else "detached from"
        details = f"attachment {label} {direction} {payload.get('owner')}"
    if event.action in ("member_added", "member_removed"):
        direction = "added to" if event.action == "member_added" else "removed from"
        details = f"user {payload.get('user')} {direction} user group {label}"
    item = event.object_ids[0] if event.object_ids and object_type in _RECORDS else None
    if object_type in _HANGS_ON and isinstance(payload.get("item"), int):
        item = payload["item"]
    item_type = payload.get("itemType") if object_type in _RECORDS else None
    organization = event.source == "identity"
    subtree: tuple[int, ...] = ()
    if object_type == "ITEM" and event_type == "DELETE":
        subtree = tuple(i for i in payload.get("subtree", ()) if isinstance(i, int))
    return ActivityDraft(
        event_type,
        object_type,
        _ACTIONS[event_type],
        details,
        item,
        item_type,
        organization,
        subtree,
        _related_project(object_type, event),
    )


def _related_project(object_type: str, event: Event) -> int | None:
    """A relationship's to-item's project (``toProject``), where it is not the event's
    (the from-item's)."""
    project = event.payload.get("toProject")
    if object_type != "RELATIONSHIP" or not isinstance(project, int) or project == event.project:
        return None
    return project


def affected_items(object_type: str, item: int | None, subtree: tuple[int, ...]) -> list[int]:
    """The ids of the items an activity affected: an item's activity, the item (and for a
    deletion, the items deleted with it); a comment's, tag's or link's, the item it hangs
    on (unless that is a test record: the items service leaves those out); none for the
    others, whose ``item`` is a test record or an attachment, or who have none."""
    if item is None:
        return []
    if object_type == "ITEM":
        return [item, *subtree]
    if object_type in _HANGS_ON:
        return [item]
    return []


def is_item_deletion(event_type: str, object_type: str, item: int | None) -> bool:
    """Whether an activity is the deletion of an item, the one kind a restore undoes."""
    return event_type == "DELETE" and object_type == "ITEM" and item is not None
