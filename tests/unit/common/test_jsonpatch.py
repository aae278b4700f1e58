"""RFC 6902 add, replace and remove with the contract's two messages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.common.errors import InvalidArgument
from plumbline.common.jsonpatch import CANNOT_SET, NO_SUCH_PATH, apply

DOC: dict[str, Any] = {"fields": {"name": "n", "tags": [1, 2]}, "location": {"parent": {"item": 3}}}

keys = st.text(alphabet="abcdefgh", min_size=1, max_size=6)
values = st.one_of(st.integers(), st.text(max_size=5), st.booleans(), st.none())


def test_add_replace_remove() -> None:
    result = apply(
        DOC,
        [
            {"op": "replace", "path": "/fields/name", "value": "m"},
            {"op": "add", "path": "/fields/new", "value": {"nested": True}},
            {"op": "remove", "path": "/location/parent/item"},
            {"op": "add", "path": "/fields/tags/-", "value": 3},
            {"op": "replace", "path": "/fields/tags/0", "value": 0},
        ],
    )
    assert result == {
        "fields": {"name": "m", "tags": [0, 2, 3], "new": {"nested": True}},
        "location": {"parent": {}},
    }
    assert DOC["fields"]["name"] == "n", "the input is not modified"


@pytest.mark.parametrize(
    ("operation", "message"),
    [
        ({"op": "replace", "path": "/fields/missing", "value": 1}, NO_SUCH_PATH),
        ({"op": "remove", "path": "/nothing/here"}, NO_SUCH_PATH),
        ({"op": "add", "path": "/no/parent", "value": 1}, NO_SUCH_PATH),
        ({"op": "replace", "path": "/fields/tags/9", "value": 1}, NO_SUCH_PATH),
        ({"op": "replace", "path": "/fields/name/x", "value": 1}, CANNOT_SET),
        ({"op": "replace", "path": "/fields/tags/x", "value": 1}, CANNOT_SET),
        ({"op": "replace", "path": "", "value": 1}, NO_SUCH_PATH),
        ({"op": "copy", "path": "/fields/name", "from": "/x"}, "op must be one of"),
        ({"op": "add", "path": "/fields/x"}, "needs a value"),
    ],
)
def test_errors(operation: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        apply(DOC, [operation])
    assert message in info.value.message


@given(keys, values)
def test_add_then_remove_is_the_identity(key: str, value: object) -> None:
    document: dict[str, Any] = {"fields": {}}
    added = apply(document, [{"op": "add", "path": f"/fields/{key}", "value": value}])
    assert added["fields"][key] == value
    assert apply(added, [{"op": "remove", "path": f"/fields/{key}"}]) == document


@given(st.dictionaries(keys, values, min_size=1), values)
def test_replace_changes_only_its_member(fields: dict[str, object], value: object) -> None:
    key = sorted(fields)[0]
    result = apply(
        {"fields": fields}, [{"op": "replace", "path": f"/fields/{key}", "value": value}]
    )
    assert result["fields"][key] == value
    assert {k: v for k, v in result["fields"].items() if k != key} == {
        k: v for k, v in fields.items() if k != key
    }


@given(st.text(alphabet="abc/~01", min_size=1, max_size=8))
def test_escaped_keys_round_trip(key: str) -> None:
    escaped = key.replace("~", "~0").replace("/", "~1")
    result = apply({"f": {}}, [{"op": "add", "path": f"/f/{escaped}", "value": 1}])
    assert result == {"f": {key: 1}}


def test_no_such_path_names_the_path() -> None:
    with pytest.raises(InvalidArgument) as info:
        apply(DOC, [{"op": "replace", "path": "/fields/missing", "value": 1}])
    assert info.value.message == f"{NO_SUCH_PATH}: /fields/missing"
