"""The contract's date formats."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.common.dates import format_date, format_datetime, parse_date_range, parse_datetime
from plumbline.common.errors import InvalidArgument


def test_format_has_milliseconds_and_utc_offset() -> None:
    value = datetime(2016, 11, 28, 23, 22, 15, 999_999, tzinfo=timezone(timedelta(hours=2)))
    assert format_datetime(value) == "2016-11-28T21:22:15.999+0000"
    assert format_date(value.date()) == "2016-11-28"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-31T13:45:00.000+0000", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
        ("2024-01-31T13:45:00+0000", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
        ("2024-01-31T13:45:00Z", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
        ("2024-01-31T15:45:00.5+02:00", datetime(2024, 1, 31, 13, 45, 0, 500_000, tzinfo=UTC)),
        ("2024-01-31T08:15:00-0530", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
    ],
)
def test_query_dates_with_and_without_milliseconds(text: str, expected: datetime) -> None:
    assert parse_datetime(text) == expected


@pytest.mark.parametrize(
    "text", ["yesterday", "2024-01-31", "2024-13-01T00:00:00Z", "2024-01-31T25:00:00Z", ""]
)
def test_garbage_names_the_parameter(text: str) -> None:
    with pytest.raises(InvalidArgument, match="createdDate"):
        parse_datetime(text, "createdDate")


def test_ranges() -> None:
    start, end = parse_date_range(["2024-01-01T00:00:00Z"], "date")
    assert end is None and start.year == 2024
    start, end = parse_date_range(["2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"], "date")
    assert end is not None and end > start
    with pytest.raises(InvalidArgument, match="before"):
        parse_date_range(["2024-02-01T00:00:00Z", "2024-01-01T00:00:00Z"], "date")
    with pytest.raises(InvalidArgument, match="one or two"):
        parse_date_range(["2024-01-01T00:00:00Z"] * 3, "date")
    with pytest.raises(InvalidArgument, match="one or two"):
        parse_date_range([], "date")


@given(
    st.datetimes(
        min_value=datetime(1970, 1, 2), max_value=datetime(9998, 12, 30), timezones=st.just(UTC)
    ),
    st.integers(min_value=-14 * 60, max_value=14 * 60),
)
def test_format_then_parse_round_trips_at_millisecond_precision(
    value: datetime, offset: int
) -> None:
    value = value.replace(microsecond=value.microsecond // 1000 * 1000)
    shifted = value.astimezone(timezone(timedelta(minutes=offset)))
    assert parse_datetime(format_datetime(shifted)) == value
