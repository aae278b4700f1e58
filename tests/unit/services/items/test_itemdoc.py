"""A bulk PATCH body, parsed by the items service (``itemdoc.bulk_patch``)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from plumbline.common import jsonpatch
from plumbline.common.errors import InvalidArgument
from plumbline.services.items.itemdoc import bulk_patch

OPERATIONS = [{"op": "replace", "path": "/fields/name", "value": "x"}]


def test_entries_are_read_in_order() -> None:
    body = [{"id": 3, "operations": OPERATIONS}, {"id": 1, "operations": []}]
    assert bulk_patch(orjson.dumps(body)) == [(3, OPERATIONS), (1, [])]


@pytest.mark.parametrize("body", [[], {}, None])
def test_the_body_is_a_non_empty_array(body: Any) -> None:
    with pytest.raises(InvalidArgument, match="non-empty JSON array"):
        bulk_patch(orjson.dumps(body))


@pytest.mark.parametrize(
    "entry",
    [
        {"id": "3a", "operations": []},
        {"id": " 3", "operations": []},
        {"id": True, "operations": []},
        {"id": 3, "operations": {}},
        {"id": 3},
        {"id": 3, "operations": [], "extra": 1},
        [3, []],
    ],
)
def test_a_malformed_entry_is_named(entry: Any) -> None:
    with pytest.raises(InvalidArgument) as info:
        bulk_patch(orjson.dumps([{"id": 1, "operations": []}, entry]))
    assert info.value.message.startswith('entry 1 must be {"id": <item id>')


def test_at_most_max_bulk_entries() -> None:
    entries = [{"id": n, "operations": []} for n in range(jsonpatch.MAX_BULK + 1)]
    with pytest.raises(InvalidArgument) as info:
        bulk_patch(orjson.dumps(entries))
    assert info.value.message == (
        f"At most {jsonpatch.MAX_BULK} items can be patched at once, got {jsonpatch.MAX_BULK + 1}."
    )
    assert len(bulk_patch(orjson.dumps(entries[:-1]))) == jsonpatch.MAX_BULK


def test_an_id_wider_than_64_bits_is_named() -> None:
    with pytest.raises(InvalidArgument) as info:
        bulk_patch(orjson.dumps([{"id": 2**64 - 1, "operations": []}]))
    assert info.value.message.startswith("entry 0.id must be between")


def test_an_id_may_be_a_string_of_digits_and_values_stay_as_sent() -> None:
    """An entry's id is a body member like any other (``"12"`` is 12); a patch value is
    free JSON written into fields: a string of digits stays a string."""
    operations = [{"op": "replace", "path": "/fields/name", "value": "1004"}]
    assert bulk_patch(orjson.dumps([{"id": "12", "operations": operations}])) == [(12, operations)]
    with pytest.raises(InvalidArgument, match="entry 0"):
        bulk_patch(orjson.dumps([{"id": "12a", "operations": operations}]))
