"""The activity feed, and the change feed (labs)."""

from __future__ import annotations

from typing import Literal, NotRequired

# pydantic reads these TypedDicts for the schemas; before Python 3.12 it needs this one.
from typing_extensions import TypedDict


class Activity(TypedDict):
    """An entry of the activity feed."""

    id: int
    date: str
    details: str
    action: str
    user: NotRequired[int]
    userComment: str
    item: NotRequired[int]
    #: The item type of the object, where the activity is about an abstract item (an item,
    #: a test plan, cycle or run, an attachment); left out otherwise.
    itemType: NotRequired[int]
    eventType: str
    objectType: str
    type: Literal["activities"]


class ConsumerPartition(TypedDict):
    """How far one partition of an event consumer (labs: ``/system/consumers``) is behind
    the events published to it."""

    #: "activity" (the activity feed), "baselines" (the history) or "hooks" (the change
    #: feed).
    consumer: str
    partition: int
    #: The replica that holds the partition; absent when none does.
    holder: NotRequired[str]
    #: Events published to the partition and not yet applied.
    eventsBehind: int
    #: How old the newest event applied was when it was applied; 0 when caught up.
    secondsBehind: float
    #: When its holder reported it (now, for the replica that answered).
    reportedAt: NotRequired[str]


class Change(TypedDict):
    """A change of the change feed (labs: ``/events``): what changed, by whom, when."""

    #: Where the feed holds it: pass it as ``after`` to read what came later.
    cursor: int
    #: The event's id: the same however often it is read or delivered.
    id: str
    #: ``<service>.<entity>.<action>``, for example ``items.item.updated``.
    type: str
    time: str
    project: NotRequired[int]
    #: The user who made the change; absent for the system's own.
    actor: NotRequired[int]
    #: CREATE, UPDATE or DELETE, as the activity feed's.
    eventType: str
    #: ITEM, RELATIONSHIP, TEST_RUN and the others of the activity feed.
    objectType: str
    #: The changed record's id.
    objectId: NotRequired[int]
    #: The record's version after the change.
    version: int
    #: The abstract item the change is about or hangs on (a comment's item).
    item: NotRequired[int]
    itemType: NotRequired[int]
    #: The change in words, as the activity feed says it.
    details: str


class Webhook(TypedDict):
    """A webhook subscription (labs: ``/webhooks``): which changes go where."""

    id: int
    #: The user whose access decides what is delivered.
    owner: int
    url: str
    description: str
    #: Whether changes are delivered (false: paused, or disabled after failing).
    active: bool
    #: Whether a delivery carries the changed record as GET answers it to the owner.
    includeObject: bool
    #: Filters, as the change feed's (empty: any).
    objectTypes: list[str]
    eventTypes: list[str]
    projects: list[int]
    itemTypes: list[int]
    createdDate: str
    modifiedDate: str
    #: The change feed's cursor delivered through.
    deliveredThrough: int
    #: While deliveries fail: since when, attempts of the change at hand, the next try.
    failingSince: NotRequired[str]
    failedAttempts: int
    nextAttemptDate: NotRequired[str]
    #: Why deliveries stopped after failing for the retry period.
    disabledReason: NotRequired[str]
    #: After a rotation: until when the previous secret also signs deliveries.
    previousSecretExpires: NotRequired[str]
    type: str


class WebhookSecret(TypedDict):
    """A webhook with its signing secret: answered once, at creation or rotation."""

    webhook: Webhook
    #: ``whsec_`` and 32 bytes in base64: verify each delivery's webhook-signature with it.
    secret: str


class Delivery(TypedDict):
    """One delivery attempt of a webhook (its delivery log)."""

    id: int
    #: The change's cursor in the change feed.
    cursor: int
    #: The change's event id: the webhook-id header of its deliveries.
    event: str
    type: str
    #: The attempt's number for this change (1 for the first).
    attempt: int
    #: Sent again on request.
    redelivery: bool
    date: str
    #: DELIVERED or FAILED.
    outcome: str
    responseCode: NotRequired[int]
    durationMs: float
    error: NotRequired[str]
