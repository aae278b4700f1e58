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
