"""Wire bodies derived from messages by their fields' wire names (``rpc.wire_members``)
stay the records the description declares (``gateway/records``)."""

from __future__ import annotations

from typing import Any

from plumbline.api.items.v1 import items_pb2
from plumbline.gateway import records, representations


def _keys(record: Any) -> set[str]:
    return set(record.__required_keys__) | set(record.__optional_keys__)


def _item(**overrides: Any) -> items_pb2.Item:
    values: dict[str, Any] = {
        "id": 7,
        "document_key": "P-REQ-7",
        "global_id": "GID-7",
        "project": 3,
        "item_type": 24,
        "child_item_type": 25,
        "created_date": "2026-11-24T10:00:00.000+0000",
        "modified_date": "2026-11-24T10:01:00.000+0000",
        "last_activity_date": "2026-11-24T10:02:00.000+0000",
        "created_by": 1,
        "modified_by": 2,
        "fields_json": b'{"name": "x"}',
        "location": items_pb2.ItemLocation(
            sort_order=1, global_sort_order=5, sequence="1.1", project=3, parent_item=6
        ),
        "lock": items_pb2.ItemLock(locked=True, last_locked_date="2026-11-24", locked_by=2),
        "allowed": ["GET", "PUT"],
        "version": 4,
    }
    values.update(overrides)
    return items_pb2.Item(**values)


def test_an_item_has_exactly_the_declared_members() -> None:
    body = representations.item(_item())
    assert set(body) == _keys(records.Item)
    assert body["childItemType"] == 25
    assert body["itemType"] == 24
    assert body["documentKey"] == "P-REQ-7"
    assert body["modifiedBy"] == 2
    assert body["lastActivityDate"] == "2026-11-24T10:02:00.000+0000"
    assert body["location"]["parent"] == {"item": 6}
    assert "version" not in body  # the history's number is not an item member


def test_an_unset_optional_member_is_left_out() -> None:
    body = representations.item(_item(child_item_type=None))
    assert "childItemType" not in body
    assert set(body) == _keys(records.Item) - {"childItemType"}


def test_a_relationship_has_exactly_the_declared_members() -> None:
    message = items_pb2.Relationship(
        id=1, from_item=2, to_item=3, relationship_type=4, suspect=True
    )
    assert representations.relationship(message) == {
        "id": 1,
        "fromItem": 2,
        "toItem": 3,
        "relationshipType": 4,
        "suspect": True,
        "type": "relationships",
    }
    assert set(representations.relationship(message)) == _keys(records.Relationship)
