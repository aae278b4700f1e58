"""A message's plain members, read and written by the names the proto gives them.

Every scalar field of a message has its JSON wire name in the descriptor (``json_name``:
``child_item_type`` is ``childItemType``), and service rows name their columns as the
proto names its fields. So a record's plain members pass from a row to a message, from
a message to a domain input, from a request body to a message and from a message to the
wire body by those names, not by one hand-written line per attribute in each place: a
new attribute is a column, a proto field and the rules that use it.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


@functools.cache
def _scalars(descriptor: Descriptor) -> tuple[tuple[str, str, bool], ...]:
    """(name, wire name, has presence) of each single, non-message, non-bytes field."""
    return tuple(
        (field.name, field.json_name, field.has_presence)
        for field in descriptor.fields
        if field.message_type is None
        and not field.is_repeated
        and field.type != FieldDescriptor.TYPE_BYTES
    )


@functools.cache
def _reader(
    descriptor: Descriptor, leave_out: frozenset[str]
) -> tuple[tuple[str, ...], Callable[[Message], tuple[Any, ...]], tuple[tuple[str, str], ...]]:
    """The wire names of the fields without presence and one getter for all of them (read
    in one call: this is on every item a page renders), and the ``optional`` fields."""
    fields = [(n, w, p) for n, w, p in _scalars(descriptor) if w not in leave_out]
    plain = [(n, w) for n, w, p in fields if not p]
    getter = operator.attrgetter(*(n for n, _ in plain)) if plain else (lambda m: ())
    read = getter if len(plain) != 1 else (lambda m: (getter(m),))
    return tuple(w for _, w in plain), read, tuple((n, w) for n, w, p in fields if p)


def wire_members(message: Message, leave_out: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The scalar fields of ``message`` under their wire names (an ``optional`` one only
    when set), except those named in ``leave_out`` (by wire name)."""
    wires, read, optional = _reader(message.DESCRIPTOR, leave_out)
    members = dict(zip(wires, read(message), strict=True))
    for name, wire in optional:
        if message.HasField(name):
            members[wire] = getattr(message, name)
    return members


def from_wire(message: M, members: Mapping[str, Any]) -> M:
    """``message`` with each scalar field set whose wire name ``members`` holds (not None)."""
    for name, wire, _ in _scalars(message.DESCRIPTOR):
        value = members.get(wire)
        if value is not None:
            setattr(message, name, value)
    return message


def given(message: Message, names: Iterable[str]) -> dict[str, Any]:
    """The values of the scalar fields among ``names``: None for an unset ``optional``."""
    wanted = set(names)
    return {
        name: getattr(message, name) if not presence or message.HasField(name) else None
        for name, _, presence in _scalars(message.DESCRIPTOR)
        if name in wanted
    }


def shared_names(message_type: type[Message], names: Iterable[str]) -> tuple[str, ...]:
    """The scalar fields of ``message_type`` that ``names`` (a table's columns) also has."""
    columns = set(names)
    return tuple(name for name, _, _ in _scalars(message_type.DESCRIPTOR) if name in columns)
