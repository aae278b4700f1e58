"""startAt and maxResults."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request

from plumbline.common.errors import InvalidArgument
from plumbline.gateway.paging import MAX_RESULTS, parse_page


def _request(query: str) -> Request:
    return Request({"type": "http", "query_string": query.encode(), "headers": []})


def test_defaults() -> None:
    page = parse_page(_request(""))
    assert (page.start_at, page.max_results) == (0, 20)


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=1, max_value=MAX_RESULTS))
def test_every_valid_page_is_accepted(start: int, size: int) -> None:
    page = parse_page(_request(f"startAt={start}&maxResults={size}"))
    assert (page.start_at, page.max_results) == (start, size)


@given(st.one_of(st.integers(max_value=0), st.integers(min_value=MAX_RESULTS + 1)))
def test_every_size_out_of_range_is_refused_with_the_range(size: int) -> None:
    with pytest.raises(InvalidArgument, match="between 1 and 50"):
        parse_page(_request(f"maxResults={size}"))


@given(st.integers(max_value=-1))
def test_negative_start_is_refused(start: int) -> None:
    with pytest.raises(InvalidArgument, match="startAt"):
        parse_page(_request(f"startAt={start}"))


@pytest.mark.parametrize(
    "query", ["maxResults=abc", "startAt=1.5", "maxResults=", "startAt=1&startAt=2"]
)
def test_malformed_values_name_the_parameter(query: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        parse_page(_request(query))
    assert query.split("=")[0] in info.value.message
