"""An item as its PUT request object: the write input, and PATCH applied to it.

PATCH paths address the request object of the item's PUT (``/fields/name``,
``/location/parent/item``); the patched document becomes the same ``ItemInput`` a PUT
makes, so both paths are checked by the same rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row

from plumbline.common import int64, jsonpatch, jsonvalues
from plumbline.common.catalog import ItemType
from plumbline.common.errors import InvalidArgument
from plumbline.common.fields import SYSTEM_FIELDS, current


@dataclass
class ItemInput:
    """What a POST, PUT or PATCH asks for; ``None`` means "not given"."""

    project: int | None = None
    item_type: int | None = None
    child_item_type: int | None = None
    parent_item: int | None = None
    parent_project: int | None = None
    global_id: str | None = None
    set_global_id_manually: bool = False
    fields: dict[str, Any] | None = None


def request_object(row: Row[Any]) -> dict[str, Any]:
    """The item as a PUT body (the document PATCH paths address)."""
    parent = {"item": row.parent} if row.parent is not None else {"project": row.project}
    document: dict[str, Any] = {
        "project": row.project,
        "itemType": row.item_type,
        "globalId": row.global_id,
        "location": {"parent": parent},
        "fields": {k: v for k, v in json.loads(row.fields_json).items() if v is not None},
    }
    if row.child_item_type is not None:
        document["childItemType"] = row.child_item_type
    return document


def patched(row: Row[Any], item_type: ItemType | None, operations: Any) -> ItemInput:
    """The input a PATCH of ``row`` asks for (RFC 6902 on its request object)."""
    document = request_object(row)
    document["fields"] = current(item_type, document["fields"])
    check_field_paths(item_type, document, operations)
    result = jsonpatch.apply(document, operations)
    if isinstance(result.get("fields"), dict):
        # A removed field is cleared, not left out: a PUT that leaves out a
        # workflow status keeps it, a PATCH that removes it asks to clear it.
        for name in document["fields"]:
            result["fields"].setdefault(name, None)
    return input_from_document(result)


def bulk_patch(raw: bytes) -> list[tuple[int, list[Any]]]:
    """A bulk PATCH body as the client sent it: ``[{"id": 12, "operations": [...]}, ...]``."""
    entries = jsonvalues.parse(raw, "the body")
    if not isinstance(entries, list) or not entries:
        raise InvalidArgument(
            'The body must be a non-empty JSON array of {"id", "operations"} objects.'
        )
    if len(entries) > jsonpatch.MAX_BULK:
        raise InvalidArgument(
            f"At most {jsonpatch.MAX_BULK} items can be patched at once, got {len(entries)}."
        )
    patches = []
    for number, entry in enumerate(entries):
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            # An id spelled as digits, as in every body; the operations stay as sent.
            entry = dict(entry, id=int64.spelled(entry["id"]))
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("id"), int)
            or isinstance(entry.get("id"), bool)
            or not isinstance(entry.get("operations"), list)
            or set(entry) - {"id", "operations"}
        ):
            raise InvalidArgument(
                f'entry {number} must be {{"id": <item id>, "operations": [<patch operations>]}}.'
            )
        if not int64.fits(entry["id"]):
            raise int64.out_of_range(f"entry {number}.id", entry["id"])
        patches.append((entry["id"], entry["operations"]))
    return patches


def check_field_paths(
    item_type: ItemType | None, document: dict[str, Any], operations: Any
) -> None:
    """The contract's "no such path" for a ``/fields/...`` path, saying which field and why."""
    if item_type is None or not isinstance(operations, list):
        return
    for operation in operations:
        path = operation.get("path") if isinstance(operation, dict) else None
        if not isinstance(path, str) or not path.startswith("/fields/"):
            continue
        name = path.split("/")[2].replace("~1", "/").replace("~0", "~")
        if item_type.field(name) is None:
            known = ", ".join(f.name for f in item_type.fields if f.name not in SYSTEM_FIELDS)
            raise InvalidArgument(
                f"{jsonpatch.NO_SUCH_PATH}: {path}; the item type {item_type.display} has "
                f"the fields: {known}."
            )
        if operation.get("op") in ("replace", "remove") and name not in document["fields"]:
            raise InvalidArgument(
                f"{jsonpatch.NO_SUCH_PATH}: {path}; {name} has no value on this item (add sets it)."
            )


def input_from_document(document: dict[str, Any]) -> ItemInput:
    """An ItemInput from a (patched) PUT request object, with type checks."""
    if not isinstance(document, dict):
        raise InvalidArgument(jsonpatch.CANNOT_SET)

    def integer(name: str, value: Any) -> int | None:
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidArgument(jsonpatch.CANNOT_SET)
        if not int64.fits(value):
            wide = int64.out_of_range(name, value)
            raise InvalidArgument(f"{jsonpatch.CANNOT_SET} {wide.message}")
        return value

    location = document.get("location") or {}
    parent = location.get("parent") if isinstance(location, dict) else None
    if (location and not isinstance(location, dict)) or (
        parent is not None and not isinstance(parent, dict)
    ):
        raise InvalidArgument(jsonpatch.CANNOT_SET)
    fields = document.get("fields", {})
    if not isinstance(fields, dict):
        raise InvalidArgument(jsonpatch.CANNOT_SET)
    global_id = document.get("globalId")
    if global_id is not None and not isinstance(global_id, str):
        raise InvalidArgument(jsonpatch.CANNOT_SET)
    return ItemInput(
        project=integer("project", document.get("project")),
        item_type=integer("itemType", document.get("itemType")),
        child_item_type=integer("childItemType", document.get("childItemType")),
        parent_item=integer("location.parent.item", (parent or {}).get("item")),
        parent_project=integer("location.parent.project", (parent or {}).get("project"))
        if not (parent or {}).get("item")
        else None,
        global_id=global_id,
        fields=fields,
    )
