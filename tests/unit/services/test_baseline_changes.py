"""A baseline comparison's change, from the domain's ``Change`` through its message to the
wire (path C): each kind carries its own members only."""

from __future__ import annotations

from typing import Any

import pytest

from plumbline.api.baselines.v1 import baselines_pb2
from plumbline.common.rpc import message_of
from plumbline.gateway import representations
from plumbline.services.baselines.baselines import Change


@pytest.mark.parametrize(
    ("change", "wire"),
    [
        (
            Change("ITEM", "ADDED", 4, 0, 2),
            {"kind": "ITEM", "change": "ADDED", "id": 4, "fromVersion": 0, "toVersion": 2},
        ),
        (
            Change("ITEM", "REMOVED", 4, 3, 0),
            {"kind": "ITEM", "change": "REMOVED", "id": 4, "fromVersion": 3, "toVersion": 0},
        ),
        (
            Change("ITEM", "CHANGED", 4, 1, 2),
            {
                "kind": "ITEM",
                "change": "CHANGED",
                "id": 4,
                "fromVersion": 1,
                "toVersion": 2,
                "changedFields": [],
            },
        ),
        (
            Change("ITEM", "CHANGED", 4, 1, 2, changed_fields=["name", "description"]),
            {
                "kind": "ITEM",
                "change": "CHANGED",
                "id": 4,
                "fromVersion": 1,
                "toVersion": 2,
                "changedFields": ["name", "description"],
            },
        ),
        (
            Change("RELATIONSHIP", "ADDED", 9, from_item=4, to_item=5, relationship_type=2),
            {
                "kind": "RELATIONSHIP",
                "change": "ADDED",
                "id": 9,
                "fromItem": 4,
                "toItem": 5,
                "relationshipType": 2,
            },
        ),
        (
            Change("RELATIONSHIP", "REMOVED", 9, from_item=4, to_item=5),
            {"kind": "RELATIONSHIP", "change": "REMOVED", "id": 9, "fromItem": 4, "toItem": 5},
        ),
    ],
)
def test_a_change_reaches_the_wire_with_its_kinds_members(
    change: Change, wire: dict[str, Any]
) -> None:
    body = representations.baseline_change(message_of(change, baselines_pb2.Change))
    assert body == {**wire, "type": "baselinechanges"}
