"""The integers Plumbline keeps: signed 64-bit, as protobuf's int64 and SQL's BIGINT."""

from __future__ import annotations

import math
import re

from plumbline.common.errors import InvalidArgument

MIN = -(2**63)
MAX = 2**63 - 1
_DIGITS = re.compile(r"-?[0-9]+")


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


def spelled(text: str) -> int | None:
    """The integer a string of ASCII digits spells (a leading minus allowed), or None for
    any other string (``"12a"``, ``""``, ``"1.5"``, ``" 3"``). Request bodies take ids and
    integers spelled this way, as the original's JSON binding does. A string too long for
    64 bits gives a number just past the range, so range checks word it and ``int`` is
    never given thousands of digits."""
    if _DIGITS.fullmatch(text) is None:
        return None
    negative = text.startswith("-")
    significant = text.lstrip("-").lstrip("0") or "0"
    if len(significant) > 19:
        return MIN - 1 if negative else MAX + 1
    return -int(significant) if negative else int(significant)
