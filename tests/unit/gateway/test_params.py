"""Parsing query parameter values (``gateway/params.py``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.common.errors import InvalidArgument
from plumbline.gateway import params


@given(st.integers(min_value=1, max_value=50))
def test_a_number_within_the_range_is_itself(number: int) -> None:
    assert params.integer([f" {number} "], "maxResults", False, 1, 50) == number


@given(st.one_of(st.integers(max_value=0), st.integers(min_value=51)))
def test_a_number_outside_the_range_is_refused_with_the_range(number: int) -> None:
    with pytest.raises(InvalidArgument) as info:
        params.integer([str(number)], "maxResults", False, 1, 50)
    assert info.value.message == f"maxResults must be between 1 and 50, got {number}"


@given(st.one_of(st.integers(max_value=-(2**63) - 1), st.integers(min_value=2**63)))
def test_numbers_beyond_64_bits_are_refused(number: int) -> None:
    with pytest.raises(InvalidArgument, match="out of range: at most 9223372036854775807"):
        params.integers(["1", str(number)], "project")


def test_absent_values() -> None:
    assert params.integer([], "author") is None
    assert params.boolean([], "rootOnly") is False
    assert params.strings([], "email") == []
    with pytest.raises(InvalidArgument, match=r"^the query parameter project is required$"):
        params.integer([], "project", required=True)


@pytest.mark.parametrize(("text", "value"), [("TRUE", True), (" no", False), ("1", True)])
def test_booleans(text: str, value: bool) -> None:
    assert params.boolean([text], "omitCount") is value


def test_malformed_values() -> None:
    with pytest.raises(InvalidArgument, match="omitCount must be true or false, got 'maybe'"):
        params.boolean(["maybe"], "omitCount")
    with pytest.raises(InvalidArgument, match="lastId may be given once, got 2 values"):
        params.integer(["1", "2"], "lastId")


def test_strings_are_bounded_and_free_of_nul() -> None:
    with pytest.raises(InvalidArgument, match="at most 3 characters"):
        params.strings(["abcd"], "contains", max_length=3)
    with pytest.raises(InvalidArgument, match="NUL"):
        params.strings(["a\x00"], "email")
