"""The contract's date formats and query date ranges."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plumbline.common.dates import (
    format_date,
    format_datetime,
    parse_date_range,
    parse_datetime,
    utcnow,
)
from plumbline.common.errors import InvalidArgument

CONTRACT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$")


def test_format_has_milliseconds_and_a_utc_offset() -> None:
    value = datetime(2016, 11, 28, 23, 22, 15, 999_999, tzinfo=UTC)
    assert format_datetime(value) == "2016-11-28T23:22:15.999+0000"


def test_format_pads_milliseconds() -> None:
    value = datetime(2016, 1, 2, 3, 4, 5, 7_000, tzinfo=UTC)
    assert format_datetime(value) == "2016-01-02T03:04:05.007+0000"


def test_format_converts_other_offsets_to_utc() -> None:
    plus_two = datetime(2016, 11, 28, 23, 22, 15, 999_999, tzinfo=timezone(timedelta(hours=2)))
    assert format_datetime(plus_two) == "2016-11-28T21:22:15.999+0000"
    minus_five_thirty = datetime(2016, 12, 31, 22, 0, tzinfo=timezone(-timedelta(hours=5.5)))
    assert format_datetime(minus_five_thirty) == "2017-01-01T03:30:00.000+0000"


def test_format_treats_naive_values_as_utc() -> None:
    assert format_datetime(datetime(2020, 2, 29, 12, 0)) == "2020-02-29T12:00:00.000+0000"


def test_format_pads_early_years_to_four_digits() -> None:
    assert format_datetime(datetime(5, 1, 1, tzinfo=UTC)) == "0005-01-01T00:00:00.000+0000"
    assert format_date(date(987, 6, 5)) == "0987-06-05"


def test_format_date() -> None:
    assert format_date(date(2016, 11, 28)) == "2016-11-28"


def test_utcnow_is_aware_and_at_millisecond_precision() -> None:
    now = utcnow()
    assert now.tzinfo is not None
    assert now.utcoffset() == timedelta(0)
    assert now.microsecond % 1000 == 0
    assert CONTRACT.match(format_datetime(now))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-31T13:45:00.000+0000", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
        ("2024-01-31T13:45:00+0000", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
        ("2024-01-31T13:45:07.123+0000", datetime(2024, 1, 31, 13, 45, 7, 123_000, tzinfo=UTC)),
        ("2024-01-31T13:45:00Z", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
        ("2024-01-31T13:45:00.250Z", datetime(2024, 1, 31, 13, 45, 0, 250_000, tzinfo=UTC)),
        ("2024-01-31T15:45:00.5+02:00", datetime(2024, 1, 31, 13, 45, 0, 500_000, tzinfo=UTC)),
        ("2024-01-31T15:45:00+0200", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
        ("2024-01-31T08:15:00-0530", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
        ("2024-01-31T08:15:00-05:30", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
        ("2024-01-01T01:00:00+0200", datetime(2023, 12, 31, 23, 0, tzinfo=UTC)),
        (" 2024-01-31T13:45:00Z ", datetime(2024, 1, 31, 13, 45, tzinfo=UTC)),
    ],
)
def test_query_dates_with_and_without_milliseconds(text: str, expected: datetime) -> None:
    parsed = parse_datetime(text)
    assert parsed == expected
    assert parsed.utcoffset() == timedelta(0)  # always returned in UTC


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "2024-01-31",
        "2024-01-31T13:45",
        "2024-01-31T13:45:00",  # no offset
        "2024-01-31 13:45:00Z",
        "2024-01-31T13:45:00.1234567Z",  # beyond microseconds
        "2024-13-01T00:00:00Z",
        "2024-02-30T00:00:00Z",
        "2024-01-31T25:00:00Z",
        "2024-01-31T13:60:00Z",
        "2024-01-31T13:45:00+2400",
        "2024-01-31T13:45:00+0099",
        "0001-01-01T00:00:00+0100",  # before the first representable instant
        "9999-12-31T23:59:59-0100",  # after the last one
        "\u0662\u0660\u0662\u0664-01-31T13:45:00Z",  # Arabic-Indic digits
    ],
)
def test_garbage_is_an_invalid_argument_naming_the_parameter(text: str) -> None:
    with pytest.raises(InvalidArgument, match="createdDate"):
        parse_datetime(text, "createdDate")


def test_one_value_is_an_open_range() -> None:
    start, end = parse_date_range(["2024-01-01T00:00:00+0100"], "date")
    assert start == datetime(2023, 12, 31, 23, 0, tzinfo=UTC)
    assert end is None


def test_two_values_are_an_inclusive_range() -> None:
    start, end = parse_date_range(["2024-01-01T00:00:00Z", "2024-02-01T00:00:00.5Z"], "date")
    assert start == datetime(2024, 1, 1, tzinfo=UTC)
    assert end == datetime(2024, 2, 1, 0, 0, 0, 500_000, tzinfo=UTC)
    same, also_same = parse_date_range(["2024-01-01T00:00:00Z", "2024-01-01T01:00:00+0100"], "d")
    assert same == also_same  # equal instants are a valid (one-instant) range


def test_a_reversed_range_is_refused() -> None:
    with pytest.raises(InvalidArgument, match=r"^date: .*before"):
        parse_date_range(["2024-02-01T00:00:00Z", "2024-01-01T00:00:00Z"], "date")
    # Reversed only once both are in UTC: 01:00+0200 is 23:00Z the day before.
    with pytest.raises(InvalidArgument, match="before"):
        parse_date_range(["2024-01-01T00:00:00Z", "2024-01-01T01:00:00+0200"], "date")


@pytest.mark.parametrize("count", [0, 3])
def test_zero_or_three_values_are_refused(count: int) -> None:
    with pytest.raises(InvalidArgument, match=f"date takes one or two dates, got {count}"):
        parse_date_range(["2024-01-01T00:00:00Z"] * count, "date")


def test_a_bad_value_in_a_range_names_the_parameter() -> None:
    with pytest.raises(InvalidArgument, match="modifiedDate"):
        parse_date_range(["2024-01-01T00:00:00Z", "soon"], "modifiedDate")


@given(
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59),
)
def test_format_then_parse_round_trips_at_millisecond_precision(
    value: datetime, offset_minutes: int
) -> None:
    shifted = value.astimezone(timezone(timedelta(minutes=offset_minutes)))
    text = format_datetime(shifted)
    assert CONTRACT.match(text), text
    expected = value.replace(microsecond=value.microsecond // 1000 * 1000)
    assert parse_datetime(text) == expected


@given(
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59),
    st.booleans(),
    st.booleans(),
)
def test_any_offset_spelling_parses_to_the_same_instant(
    value: datetime, offset_minutes: int, colon: bool, with_ms: bool
) -> None:
    value = value.replace(microsecond=value.microsecond // 1000 * 1000 if with_ms else 0)
    local = value.astimezone(timezone(timedelta(minutes=offset_minutes)))
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    offset = f"{sign}{hours:02d}{':' if colon else ''}{minutes:02d}"
    fraction = f".{local.microsecond // 1000:03d}" if with_ms else ""
    text = (
        f"{local.year:04d}-{local.month:02d}-{local.day:02d}T"
        f"{local.hour:02d}:{local.minute:02d}:{local.second:02d}{fraction}{offset}"
    )
    assert parse_datetime(text) == value
