"""One way across the boundary: a row, a mapping or a dataclass to a message
(``message_of``), a message or a mapping to a dataclass (``dataclass_of``) and a message
to its wire body (``wire_members``), by the fields' names."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, insert, select

from plumbline.api.baselines.v1 import baselines_pb2
from plumbline.api.identity.v1 import identity_pb2
from plumbline.api.items.v1 import items_pb2
from plumbline.api.testmgmt.v1 import testmgmt_pb2
from plumbline.common.rpc import (
    dataclass_of,
    from_wire,
    given,
    message_of,
    shared_names,
    wire_members,
)


@dataclass
class _Match:
    name: str
    test_run: int
    status: str


@dataclass
class _Unmatched:
    name: str
    references: list[str]


@dataclass
class _Answer:
    test_cycle: int
    matched: list[_Match] = field(default_factory=list)
    unmatched: list[_Unmatched] = field(default_factory=list)
    replayed: bool = False


@dataclass
class _Change:
    kind: str
    id: int
    from_version: int | None = None
    changed_fields: list[str] = field(default_factory=list)


def test_a_row_becomes_its_message_by_column_names() -> None:
    groups = Table(
        "groups",
        MetaData(),
        Column("id", Integer),
        Column("name", String),
        Column("description", String),
        Column("project", Integer),
        Column("secret", String),
    )
    engine = create_engine("sqlite://")
    with engine.begin() as connection:
        groups.create(connection)
        connection.execute(insert(groups), [{"id": 1, "name": "QA", "description": "d"}])
        row = connection.execute(select(groups)).one()
    message = message_of(row, identity_pb2.Group)
    assert message == identity_pb2.Group(id=1, name="QA", description="d")
    assert not message.HasField("project")  # NULL leaves an optional field unset


def test_members_given_take_precedence_and_none_leaves_a_field_unset() -> None:
    source = {"id": 3, "name": "R1", "release_date": "not the wire form", "item_count": 2}
    message = message_of(source, items_pb2.Release, release_date=None, project=9)
    assert message.id == 3
    assert message.project == 9
    assert message.item_count == 2
    assert not message.HasField("release_date")
    assert message_of(source, items_pb2.Release, release_date="2026-01-01").release_date == (
        "2026-01-01"
    )


def test_a_member_the_message_lacks_is_an_error() -> None:
    with pytest.raises(ValueError, match="nope"):
        message_of({}, items_pb2.Tag, nope=1)


def test_what_is_not_a_record_is_refused() -> None:
    Pair = namedtuple("Pair", "id name")
    with pytest.raises(TypeError, match="Pair"):
        message_of(Pair(1, "x"), items_pb2.Tag)


def test_nested_dataclasses_become_nested_messages() -> None:
    answer = _Answer(
        7,
        matched=[_Match("a", 11, "PASSED")],
        unmatched=[_Unmatched("b", ["P-TC-1", "9"])],
    )
    message = message_of(answer, testmgmt_pb2.IngestReply)
    assert message.test_cycle == 7
    assert not message.replayed
    assert message.matched[0] == testmgmt_pb2.IngestMatch(name="a", test_run=11, status="PASSED")
    assert list(message.unmatched[0].references) == ["P-TC-1", "9"]


def test_a_mapping_becomes_a_sub_message() -> None:
    message = message_of({"id": 1, "origin": {"item": 5, "filter": None}}, baselines_pb2.Baseline)
    assert message.origin.item == 5
    assert not message.origin.HasField("filter")


def test_a_message_becomes_its_dataclass_and_back() -> None:
    answer = _Answer(
        7, [_Match("a", 11, "FAILED"), _Match("c", 12, "PASSED")], [_Unmatched("b", ["x"])]
    )
    assert dataclass_of(message_of(answer, testmgmt_pb2.IngestReply), _Answer) == answer


def test_an_unset_optional_field_reads_as_none() -> None:
    change = dataclass_of(baselines_pb2.Change(kind="RELATIONSHIP", id=4), _Change)
    assert change == _Change("RELATIONSHIP", 4, None, [])
    item = dataclass_of(baselines_pb2.Change(kind="ITEM", id=4, from_version=0), _Change)
    assert item.from_version == 0


def test_a_mapping_becomes_its_dataclass_with_defaults_for_what_it_lacks() -> None:
    stored = {"test_cycle": 7, "matched": [{"name": "a", "test_run": 11, "status": "PASSED"}]}
    assert dataclass_of(stored, _Answer) == _Answer(7, [_Match("a", 11, "PASSED")])


def test_wire_members_rename_what_the_contract_names_differently() -> None:
    message = items_pb2.PickList(id=1, name="n", description="d", kind="TEXT")
    assert wire_members(message, frozenset({"description"}), rename={"kind": "type"}) == {
        "id": 1,
        "name": "n",
        "type": "TEXT",
    }


def test_nested_wire_members_recurse_into_lists_and_sub_messages() -> None:
    reply = testmgmt_pb2.IngestReply(
        test_cycle=7,
        matched=[testmgmt_pb2.IngestMatch(name="a", test_run=11, status="PASSED")],
        unmatched=[testmgmt_pb2.IngestUnmatched(name="b", references=["x"], status="FAILED")],
    )
    body = wire_members(reply, nested=True, rename={"matched.status": "testRunStatus"})
    assert body["matched"][0]["testRunStatus"] == "PASSED"
    assert "status" not in body["matched"][0]
    assert body["unmatched"] == [
        {"name": "b", "classname": "", "references": ["x"], "status": "FAILED"}
    ]
    assert body["testCycle"] == 7
    assert body["testCases"] == 0
    assert body["replayed"] is False


def test_nested_wire_members_leave_out_unset_optionals_and_sub_messages() -> None:
    change = baselines_pb2.Change(kind="ITEM", change="ADDED", id=3, from_version=0)
    assert wire_members(change, nested=True) == {
        "kind": "ITEM",
        "change": "ADDED",
        "id": 3,
        "fromVersion": 0,
        "changedFields": [],
    }
    baseline = wire_members(baselines_pb2.Baseline(id=1), frozenset({"name"}), nested=True)
    assert "origin" not in baseline
    assert "name" not in baseline
    with_origin = baselines_pb2.Baseline(id=1, origin=baselines_pb2.Origin(item=5))
    assert wire_members(with_origin, nested=True)["origin"] == {"item": 5, "items": []}


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
