"""JSON values on their way to the services, encoded or parsed once where they are applied
(``libs/common/jsonvalues.py``)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.common import jsonpatch
from plumbline.common.errors import InvalidArgument
from plumbline.common.jsonvalues import MAX_DEPTH, free_json, json_bytes, parse

# What fits: 64-bit integers, text without NUL (PostgreSQL cannot store it).
storable_text = st.text(
    alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"])
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | storable_text,
    lambda children: st.lists(children) | st.dictionaries(storable_text, children),
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


@given(json_values)
def test_what_fits_parses_unchanged(value: Any) -> None:
    assert parse(orjson.dumps(value), "the body") == value


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_nesting_up_to_the_limit_parses_and_deeper_is_refused() -> None:
    assert parse(_nested(MAX_DEPTH), "the body") is not None
    for raw in (_nested(MAX_DEPTH + 1), b'{"a":' * (MAX_DEPTH + 1) + b"1" + b"}" * (MAX_DEPTH + 1)):
        with pytest.raises(InvalidArgument) as info:
            parse(raw, "the body")
        assert info.value.message == (
            f"the body nests arrays and objects too deeply (at most {MAX_DEPTH} levels)."
        )


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (b'[{"op": "add", "value": "a\\u0000b"}]', "the body[0].value"),
        (b'{"k\\u0000": 1}', "the body.k\x00"),
        (b'[[1, ["\\u0000"]]]', "the body[0][1][0]"),
    ],
)
def test_nul_is_refused_where_it_is(raw: bytes, where: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        parse(raw, "the body")
    assert info.value.message == f"{where} must not contain NUL characters."


def test_an_escaped_backslash_before_u0000_is_no_nul() -> None:
    assert parse(b'["\\\\u0000"]', "the body") == ["\\u0000"]


def test_what_is_not_json_is_a_400_with_the_parser_s_reason() -> None:
    with pytest.raises(InvalidArgument) as info:
        parse(b"[1,", "the body")
    assert info.value.message.startswith("The request body is not valid JSON (")
    with pytest.raises(InvalidArgument, match="not valid JSON"):
        parse(b'["\\ud800"]', "the body")  # an unpaired surrogate


@pytest.mark.parametrize("raw", [b"", b"{}", b'"add"', b"null"])
def test_patch_operations_must_be_an_array(raw: bytes) -> None:
    with pytest.raises(InvalidArgument) as info:
        jsonpatch.operations(raw)
    assert info.value.message == jsonpatch.NOT_AN_ARRAY


def test_patch_operations_are_the_array_sent() -> None:
    sent = [{"op": "replace", "path": "/fields/name", "value": "x"}]
    assert jsonpatch.operations(orjson.dumps(sent)) == sent
