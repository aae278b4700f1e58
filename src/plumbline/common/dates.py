"""The contract's date formats.

Responses carry ``yyyy-MM-dd'T'HH:mm:ss.SSS+0000``; query parameters may omit the
milliseconds and use any offset; dates inside an item's ``fields`` are ``yyyy-MM-dd``.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone
from typing import overload

from plumbline.common.errors import InvalidArgument

_QUERY_DATE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?"
    r"(Z|[+-]\d{2}:?\d{2})$",
    re.ASCII,
)


def utcnow() -> datetime:
    """Now, in UTC, at millisecond precision (what the wire can carry)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


@overload
def as_utc(value: datetime) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: datetime | None) -> datetime | None:
    """A stored time with its zone: SQLite gives ``DateTime(timezone=True)`` back without
    one, and every stored time is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def format_datetime(value: datetime) -> str:
    """``2016-11-28T23:22:15.999+0000``."""
    value = as_utc(value).astimezone(UTC)
    # Not strftime: glibc's %Y does not pad years before 1000 to four digits.
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}T"
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}."
        f"{value.microsecond // 1000:03d}+0000"
    )


def format_date(value: date) -> str:
    """``2016-11-28``: the form of date fields inside ``fields``."""
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def parse_datetime(text: str, name: str = "date") -> datetime:
    """Parses a query-parameter date; raises ``InvalidArgument`` naming ``name``."""
    match = _QUERY_DATE.match(text.strip())
    if match is None:
        raise InvalidArgument(
            f"{name} must be a date like 2024-01-31T13:45:00.000+0000 "
            f"(milliseconds optional), got {text!r}"
        )
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    micro = int((fraction or "0").ljust(6, "0"))
    try:
        if offset == "Z":
            tz = UTC
        else:
            sign = 1 if offset[0] == "+" else -1
            digits = offset[1:].replace(":", "")
            if int(digits[:2]) > 23 or int(digits[2:]) > 59:
                raise ValueError("the offset is out of range")
            tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
        value = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tz
        )
        return value.astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise InvalidArgument(f"{name} is not a valid date: {text!r} ({exc})") from None


def parse_date_range(values: list[str], name: str) -> tuple[datetime, datetime | None]:
    """One value means "at or after"; two values are an inclusive range."""
    if not 1 <= len(values) <= 2:
        raise InvalidArgument(f"{name} takes one or two dates, got {len(values)}")
    start = parse_datetime(values[0], name)
    if len(values) == 1:
        return start, None
    end = parse_datetime(values[1], name)
    if end < start:
        raise InvalidArgument(f"{name}: the second date must not be before the first")
    return start, end


def parse_iso(text: str) -> datetime:
    """Inverse of ``format_datetime`` for values that travel between services."""
    return parse_datetime(text)
