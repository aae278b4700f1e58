"""The integers Plumbline keeps: signed 64-bit, as protobuf's int64 and SQL's BIGINT."""

from __future__ import annotations

import math

from plumbline.common.errors import InvalidArgument

MIN = -(2**63)
MAX = 2**63 - 1


def fits(value: float) -> bool:
    """Whether ``value`` is within the signed 64-bit range."""
    return MIN <= value <= MAX


def out_of_range(where: str, value: float) -> InvalidArgument:
    """The 400 for a number that does not fit, naming where it was sent."""
    if isinstance(value, int) and value.bit_length() > 128:
        # Spelling out thousands of digits helps nobody (and str() refuses past 4,300).
        shown = f"a number of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    else:
        shown = repr(value)
    return InvalidArgument(f"{where} must be between {MIN} and {MAX}, got {shown}.")
