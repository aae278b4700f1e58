"""Messages and their wire bodies, by the fields' wire names (``rpc.wire_members``,
``from_wire``, ``given``, ``shared_names``)."""

from __future__ import annotations

import pytest

from plumbline.api.items.v1 import items_pb2
from plumbline.common.rpc import from_wire, given, shared_names, wire_members


def test_wire_members_keep_zero_values_of_fields_without_presence() -> None:
    members = wire_members(items_pb2.Relationship(id=1), frozenset({"id"}))
    assert members == {"fromItem": 0, "toItem": 0, "relationshipType": 0, "suspect": False}


def test_from_wire_sets_what_is_given_by_wire_name() -> None:
    message = from_wire(
        items_pb2.ItemInput(),
        {"itemType": 5, "childItemType": None, "globalId": "G", "location": {}, "id": 9},
    )
    assert message.item_type == 5
    assert message.global_id == "G"
    assert not message.HasField("child_item_type")
    assert not message.HasField("project")


@pytest.mark.parametrize("set_child", [True, False])
def test_given_reads_unset_optionals_as_none(set_child: bool) -> None:
    message = items_pb2.ItemInput(project=3, set_global_id_manually=True)
    if set_child:
        message.child_item_type = 8
    values = given(message, ["project", "child_item_type", "set_global_id_manually", "nope"])
    assert values == {
        "project": 3,
        "child_item_type": 8 if set_child else None,
        "set_global_id_manually": True,
    }


def test_shared_names_are_the_scalar_fields_both_have() -> None:
    assert shared_names(items_pb2.Item, ["id", "version", "fields_json", "lock", "x"]) == (
        "id",
        "version",
    )
