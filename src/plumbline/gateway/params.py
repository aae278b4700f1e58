"""Parsing query parameter values, with errors that name the parameter.

Each parser takes every value the query string holds for one parameter (a repeated
single-valued parameter is an error, not "the last one wins"). ``gateway/query.py``
declares the parameters and hands the values in.
"""

from __future__ import annotations

from collections.abc import Sequence

from plumbline.common import int64
from plumbline.common.errors import InvalidArgument

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def _number(name: str, value: str, minimum: int | None, maximum: int | None) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        raise InvalidArgument(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and maximum is not None and not minimum <= number <= maximum:
        raise InvalidArgument(f"{name} must be between {minimum} and {maximum}, got {number}")
    if not int64.fits(number):
        raise InvalidArgument(f"{name} is out of range: at most {int64.MAX}, got {value}")
    return number


def integers(values: Sequence[str], name: str) -> list[int]:
    """Every value of a repeatable integer parameter."""
    return [_number(name, value, None, None) for value in values]


def integer(
    values: Sequence[str],
    name: str,
    required: bool = False,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | None:
    """A single integer parameter, within ``minimum`` and ``maximum`` when both are given."""
    value = single(values, name, required)
    return None if value is None else _number(name, value, minimum, maximum)


def single(values: Sequence[str], name: str, required: bool = False) -> str | None:
    """The one value of a parameter given at most once; None when absent and not required."""
    if not values:
        if required:
            raise InvalidArgument(f"the query parameter {name} is required")
        return None
    if len(values) > 1:
        raise InvalidArgument(f"{name} may be given once, got {len(values)} values")
    return values[0]


def boolean(values: Sequence[str], name: str, default: bool = False) -> bool:
    """A boolean parameter (true/false, any capitalisation)."""
    if not values:
        return default
    text = values[-1].strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InvalidArgument(f"{name} must be true or false, got {values[-1]!r}")


def strings(values: Sequence[str], name: str, max_length: int = 255) -> list[str]:
    """Every value of a repeatable string parameter."""
    for value in values:
        if len(value) > max_length:
            raise InvalidArgument(f"{name} values must be at most {max_length} characters")
        if "\x00" in value:
            raise InvalidArgument(f"{name} must not contain NUL characters")
    return list(values)
