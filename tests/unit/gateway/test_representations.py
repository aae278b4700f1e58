"""Wire bodies derived from messages by their fields' wire names (``rpc.wire_members``)
stay the records the description declares (``gateway/records``)."""

from __future__ import annotations

import inspect
import typing
from typing import Any, NotRequired, cast

import pytest
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from typing_extensions import is_typeddict

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


# Every representation, held to the record type it declares: a message with every field
# set gives every member the type declares (the nested records' too), one with none set
# the required members, and nothing the type does not declare.


def _full(message_type: type[Message]) -> Message:
    """A ``message_type`` with every field set (the last of a oneof wins)."""
    values: dict[str, Any] = {}
    for field in message_type.DESCRIPTOR.fields:
        if field.message_type is not None:
            value: Any = _full(GetMessageClass(cast(Descriptor, field.message_type)))
        elif field.type == FieldDescriptor.TYPE_BYTES:
            value = b"{}"
        elif field.type == FieldDescriptor.TYPE_STRING:
            value = f"{field.name} value"
        elif field.type == FieldDescriptor.TYPE_BOOL:
            value = True
        elif field.type == FieldDescriptor.TYPE_ENUM:
            value = cast(EnumDescriptor, field.enum_type).values[-1].number
        else:
            value = field.number + 100
        values[field.name] = [value] if field.is_repeated else value
    return message_type(**values)


def _representations() -> list[tuple[str, type[Message], Any]]:
    found = []
    for name, function in inspect.getmembers(representations, inspect.isfunction):
        if name.startswith("_") or function.__module__ != representations.__name__:
            continue
        hints = typing.get_type_hints(function)
        parameter = hints[next(iter(inspect.signature(function).parameters))]
        returned = hints["return"]
        is_message = isinstance(parameter, type) and issubclass(parameter, Message)
        if is_message and is_typeddict(returned):
            found.append((name, parameter, returned))
    return found


#: Members a message with every field set does not give (by path): the other side of a
#: choice.
_NOT_ALL_AT_ONCE = {
    "item.location.parent": {"project"},  # under an item, or at the project's root
    "baseline_change": {"changedFields"},  # only for a changed item
    "report_work": {"file"},  # the route's URL, once the work is DONE
}


def _check(body: Any, record: Any, path: str, all_keys: bool) -> None:
    keys = _keys(record)
    assert set(body) <= keys, f"{path}: {set(body) - keys} not declared"
    required = _required(record)
    assert required <= set(body), f"{path}: {required - set(body)} missing"
    if all_keys:
        left = _NOT_ALL_AT_ONCE.get(path, set())
        assert set(body) == keys - left, f"{path}: {keys - left - set(body)} missing"
    hints = typing.get_type_hints(record)
    for key, value in body.items():
        hint = hints[key]
        if typing.get_origin(hint) is list and is_typeddict(typing.get_args(hint)[0]):
            for element in value:
                _check(element, typing.get_args(hint)[0], f"{path}.{key}", all_keys)
        elif is_typeddict(hint):
            _check(value, hint, f"{path}.{key}", all_keys)


def _required(record: Any) -> set[str]:
    """The members a record type requires (its ``__required_keys__`` does not see the
    ``NotRequired`` of a postponed annotation)."""
    hints = typing.get_type_hints(record, include_extras=True)
    if not record.__total__:
        return set()
    return {k for k, hint in hints.items() if typing.get_origin(hint) is not NotRequired}


REPRESENTATIONS = _representations()


def test_every_representation_is_checked() -> None:
    names = {name for name, _, _ in REPRESENTATIONS}
    assert {"user", "group", "tag", "release", "category", "test_group"} <= names
    assert {"baseline_folder", "baseline_change", "item", "comment", "test_run"} <= names


@pytest.mark.parametrize(
    ("name", "message_type", "record"), REPRESENTATIONS, ids=[n for n, _, _ in REPRESENTATIONS]
)
def test_a_representation_has_exactly_its_record_types_members(
    name: str, message_type: type[Message], record: Any
) -> None:
    function = getattr(representations, name)
    full = function(_full(message_type))
    _check(full, record, name, True)
    _check(function(message_type()), record, name, False)
