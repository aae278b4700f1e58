"""A message's plain members, read and written by the names the proto gives them.

Every scalar field of a message has its JSON wire name in the descriptor (``json_name``:
``child_item_type`` is ``childItemType``), and service rows name their columns as the
proto names its fields. So a record's plain members pass from a row to a message, from
a message to a domain input, from a request body to a message and from a message to the
wire body by those names, not by one hand-written line per attribute in each place: a
new attribute is a column, a proto field and the rules that use it.

Answers made of nested records (a JUnit ingest's answer, a baseline comparison's
changes) pass the same way between a domain dataclass and its message (``message_of``,
``dataclass_of``) and from the message to the wire body (``wire_members`` with
``nested``): the shape is the dataclass, the proto and the described record type.
What the wire contract names differently is a rename (``rename``), by wire name, with the
path of the member for one inside a nested record (``{"matched.status":
"testRunStatus"}``).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

M = TypeVar("M", bound=Message)
D = TypeVar("D")


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


def wire_members(
    message: Message,
    leave_out: frozenset[str] = frozenset(),
    *,
    rename: Mapping[str, str] | None = None,
    nested: bool = False,
) -> dict[str, Any]:
    """The scalar fields of ``message`` under their wire names (an ``optional`` one only
    when set), except those named in ``leave_out`` (by wire name), and under ``rename``'s
    name where it gives one. With ``nested``, repeated fields too (a list) and sub-messages
    (each one's members the same way; a set one only); ``leave_out`` and ``rename`` name
    a nested member by its path (``matched.status``)."""
    if nested:
        return _nested(message, leave_out, rename or {}, "")
    wires, read, optional = _reader(message.DESCRIPTOR, leave_out)
    members = dict(zip(wires, read(message), strict=True))
    for name, wire in optional:
        if message.HasField(name):
            members[wire] = getattr(message, name)
    if rename:
        return {rename.get(wire, wire): value for wire, value in members.items()}
    return members


def _nested(
    message: Message, leave_out: frozenset[str], rename: Mapping[str, str], prefix: str
) -> dict[str, Any]:
    members: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        path = prefix + field.json_name
        if path in leave_out or field.type == FieldDescriptor.TYPE_BYTES:
            continue
        value = getattr(message, field.name)
        if field.is_repeated:
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                raise TypeError(f"{field.full_name}: a map has no wire members")
            if field.message_type is not None:
                value = [_nested(v, leave_out, rename, path + ".") for v in value]
            else:
                value = list(value)
        elif field.has_presence and not message.HasField(field.name):
            continue
        elif field.message_type is not None:
            value = _nested(value, leave_out, rename, path + ".")
        members[rename.get(path, field.json_name)] = value
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


@functools.cache
def _fields(descriptor: Descriptor) -> tuple[tuple[str, type[Message] | None], ...]:
    """(name, the message class of a message-typed field) of each field."""
    return tuple(
        (f.name, GetMessageClass(f.message_type) if f.message_type is not None else None)
        for f in descriptor.fields
    )


def _values_of(source: Any) -> Mapping[str, Any]:
    if isinstance(source, Mapping):
        return source
    mapping = getattr(source, "_mapping", None)  # a database row
    if mapping is not None:
        return typing.cast(Mapping[str, Any], mapping)
    if dataclasses.is_dataclass(source) and not isinstance(source, type):
        return {f.name: getattr(source, f.name) for f in dataclasses.fields(source)}
    raise TypeError(f"{type(source).__name__} is not a row, a mapping or a dataclass")


def message_of(source: Any, message_type: type[M], /, **members: Any) -> M:
    """A ``message_type`` with each field that ``source`` (a database row, a mapping or a
    dataclass) has under the field's name, and ``members`` (which take precedence, for
    what the source holds in another form). None leaves a field unset; a dataclass, a
    mapping or a list of them becomes the field's message (the same way)."""
    values = _values_of(source)
    given: dict[str, Any] = {}
    for name, sub in _fields(message_type.DESCRIPTOR):
        value = members.pop(name) if name in members else values.get(name)
        if value is None:
            continue
        if sub is not None and not sub.DESCRIPTOR.GetOptions().map_entry:
            if isinstance(value, (list, tuple)):
                value = [v if isinstance(v, Message) else message_of(v, sub) for v in value]
            elif not isinstance(value, Message):
                value = message_of(value, sub)
        given[name] = value
    return message_type(**given, **members)  # a member the message lacks is an error


@functools.cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _record_type(hint: Any) -> tuple[Any, bool]:
    """The dataclass a hint names (``X``, ``X | None``, ``list[X]``; else None) and
    whether it is a list."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _record_type(inner[0]) if len(inner) == 1 else (None, False)
    if origin is list:
        (element,) = typing.get_args(hint)
        return (element if dataclasses.is_dataclass(element) else None), True
    return (hint if dataclasses.is_dataclass(hint) else None), False


def dataclass_of(source: Message | Mapping[str, Any], cls: type[D]) -> D:
    """The ``cls`` dataclass ``message_of`` reads: each of its fields from the message's
    field (or the mapping's key) of that name (an unset ``optional`` as None), its nested
    dataclasses (by their type hints) the same way; what the source lacks keeps its
    default."""
    hints = _hints(typing.cast(Any, cls))
    values: dict[str, Any] = {}
    for f in dataclasses.fields(typing.cast(Any, cls)):
        if not f.init:
            continue
        if isinstance(source, Message):
            field = source.DESCRIPTOR.fields_by_name.get(f.name)
            if field is None:
                continue
            has = field.is_repeated or not field.has_presence or source.HasField(f.name)
            value = getattr(source, f.name) if has else None
        elif f.name in source:
            value = source[f.name]
        else:
            continue
        record, many = _record_type(hints[f.name])
        if value is not None:
            if record is not None:
                value = (
                    [dataclass_of(v, record) for v in value]
                    if many
                    else dataclass_of(value, record)
                )
            elif many:
                value = list(value)
        values[f.name] = value
    return cls(**values)
