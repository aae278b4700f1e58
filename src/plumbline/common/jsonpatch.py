"""RFC 6902 operations ``add``, ``replace`` and ``remove`` with the contract's messages.

Paths address the request object of the resource's PUT (``/fields/name``,
``/location/parent/item``). ``replace`` and ``remove`` need an existing path; ``add``
creates the last member. Type mismatches (a value where an object is needed, an index
into an object) are the contract's "could not be set" error.
"""

from __future__ import annotations

import copy
from typing import Any

from plumbline.common import jsonvalues
from plumbline.common.errors import InvalidArgument

NO_SUCH_PATH = "no such path in target JSON document"
CANNOT_SET = "The value you provided could not be set at the path."
OPERATIONS = ("add", "replace", "remove")


NOT_AN_ARRAY = "The body must be a JSON array of patch operations."
MAX_BULK = 500
"""The most items one bulk PATCH may change."""


def operations(raw: bytes) -> list[Any]:
    """A PATCH body as the client sent it, parsed (once, here, where it is applied)."""
    value = jsonvalues.parse(raw, "the body")
    if not isinstance(value, list):
        raise InvalidArgument(NOT_AN_ARRAY)
    return value


def _tokens(path: Any) -> list[str]:
    if not isinstance(path, str) or not path.startswith("/"):
        raise InvalidArgument(f"{NO_SUCH_PATH}: path must start with '/', got {path!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _index(container: list[Any], token: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit():
        raise InvalidArgument(CANNOT_SET)
    index = int(token)
    if index > len(container) or (index == len(container) and not allow_end):
        raise InvalidArgument(NO_SUCH_PATH)
    return index


def apply(document: dict[str, Any], operations: Any) -> dict[str, Any]:
    """A patched copy of ``document``; the original is left alone."""
    if not isinstance(operations, list):
        raise InvalidArgument(NOT_AN_ARRAY)
    result = copy.deepcopy(document)
    for number, operation in enumerate(operations):
        if not isinstance(operation, dict):
            raise InvalidArgument(f"operation {number} must be a JSON object")
        op = operation.get("op")
        if op not in OPERATIONS:
            raise InvalidArgument(
                f"operation {number}: op must be one of add, replace, remove, got {op!r}"
            )
        if op != "remove" and "value" not in operation:
            raise InvalidArgument(f"operation {number}: {op} needs a value")
        tokens = _tokens(operation.get("path"))
        try:
            _apply_one(result, op, tokens, operation.get("value"))
        except InvalidArgument as exc:
            if exc.message != NO_SUCH_PATH:
                raise
            raise InvalidArgument(f"{NO_SUCH_PATH}: {operation['path']}") from None
    return result


def _apply_one(document: dict[str, Any], op: str, tokens: list[str], value: Any) -> None:
    if tokens == [""]:
        raise InvalidArgument(CANNOT_SET)
    parent = _parent(document, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if op == "add":
            parent[last] = copy.deepcopy(value)
        elif last not in parent:
            raise InvalidArgument(NO_SUCH_PATH)
        elif op == "replace":
            parent[last] = copy.deepcopy(value)
        else:
            del parent[last]
    elif isinstance(parent, list):
        index = _index(parent, last, allow_end=op == "add")
        if op == "add":
            parent.insert(index, copy.deepcopy(value))
        elif op == "replace":
            parent[index] = copy.deepcopy(value)
        else:
            del parent[index]
    else:
        raise InvalidArgument(CANNOT_SET)


def _parent(document: dict[str, Any], tokens: list[str]) -> Any:
    """The member ``tokens`` lead to: it must exist (RFC 6902), and only objects and
    arrays have members."""
    parent: Any = document
    for token in tokens:
        if isinstance(parent, dict):
            if token not in parent:
                # Even add creates only the member it names, not missing parents (RFC 6902).
                raise InvalidArgument(NO_SUCH_PATH)
            parent = parent[token]
        elif isinstance(parent, list):
            parent = parent[_index(parent, token, allow_end=False)]
        else:
            raise InvalidArgument(CANNOT_SET)
    return parent
