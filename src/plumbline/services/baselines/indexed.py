"""What the history reads out of a version's snapshot into columns of its own, so that a
historic trace can find a project's items of a type, and a test case's runs, by index."""

from __future__ import annotations

import base64
import json
from typing import Any

#: The owners' wire record types the columns are read from.
ITEM = "plumbline.items.v1.Item"
TEST_RECORD = "plumbline.testmgmt.v1.TestRecord"


def inner_json(value: Any) -> dict[str, Any]:
    """A bytes member of a snapshot (base64 in protobuf JSON) holding a JSON object."""
    if not value:
        return {}
    try:
        decoded = json.loads(base64.b64decode(value))
    except ValueError:
        return {}
    return decoded if isinstance(decoded, dict) else {}


def _int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def indexed_columns(
    record_type: str, snapshot: str | dict[str, Any]
) -> tuple[int | None, int | None]:
    """(item_type, test_case) of a version: an item's type, a test run's test case."""
    if record_type not in (ITEM, TEST_RECORD):
        return None, None
    record = json.loads(snapshot) if isinstance(snapshot, str) else snapshot
    if not isinstance(record, dict):
        return None, None
    item_type = _int(record.get("itemType"))
    if record_type == ITEM or record.get("kind") != "RUN":
        return item_type, None
    return item_type, _int(inner_json(record.get("fieldsJson")).get("testCase"))
