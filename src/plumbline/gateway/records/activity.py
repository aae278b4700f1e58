"""The activity feed."""

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

    #: "activity" (the activity feed) or "baselines" (the history).
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
