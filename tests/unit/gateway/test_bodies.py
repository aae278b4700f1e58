"""Free-form body members on their way to the services."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.common.errors import InvalidArgument
from plumbline.gateway.bodies import free_json, json_bytes

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@given(json_values)
def test_what_fits_travels_unchanged(value: Any) -> None:
    assert orjson.loads(free_json(value, "fields")) == value


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"priority": 2**63}, "fields.priority"),
        ({"a": [0, {"b": -(2**63) - 1}]}, "fields.a[1].b"),
        ([2**64], "fields[0]"),
    ],
)
def test_wide_integers_are_named_by_their_path(value: Any, where: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        free_json(value, "fields")
    assert info.value.message.startswith(f"{where} must be between -9223372036854775808 and ")


def test_unpaired_surrogates_and_deep_nesting_are_400s() -> None:
    with pytest.raises(InvalidArgument, match=r"fields\.name is not valid Unicode"):
        free_json({"name": "a\ud800"}, "fields")
    with pytest.raises(InvalidArgument, match=r"fields\.x\\udc00 is not valid Unicode"):
        free_json({"x\udc00": 1}, "fields")
    deep: list[Any] = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(InvalidArgument, match="too deeply"):
        json_bytes(deep, "the body")
