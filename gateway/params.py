"""Reading query parameters with errors that name the parameter."""

from __future__ import annotations

from starlette.requests import Request

from plumbline.common.errors import InvalidArgument

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def integers(request: Request, name: str) -> list[int]:
    """Every value of a repeatable integer parameter."""
    result = []
    for value in request.query_params.getlist(name):
        try:
            number = int(value.strip())
        except ValueError:
            raise InvalidArgument(f"{name} must be an integer, got {value!r}") from None
        if not -(2**63) <= number < 2**63:
            raise InvalidArgument(f"{name} is out of range: at most {2**63 - 1}, got {value}")
        result.append(number)
    return result


def integer(request: Request, name: str, required: bool = False) -> int | None:
    """A single integer parameter."""
    values = integers(request, name)
    if not values:
        if required:
            raise InvalidArgument(f"the query parameter {name} is required")
        return None
    if len(values) > 1:
        raise InvalidArgument(f"{name} may be given once, got {len(values)} values")
    return values[0]


def boolean(request: Request, name: str, default: bool = False) -> bool:
    """A boolean parameter (true/false, any capitalisation)."""
    values = request.query_params.getlist(name)
    if not values:
        return default
    text = values[-1].strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InvalidArgument(f"{name} must be true or false, got {values[-1]!r}")


def strings(request: Request, name: str, max_length: int = 255) -> list[str]:
    """Every value of a repeatable string parameter."""
    values = request.query_params.getlist(name)
    for value in values:
        if len(value) > max_length:
            raise InvalidArgument(f"{name} values must be at most {max_length} characters")
        if "\x00" in value:
            raise InvalidArgument(f"{name} must not contain NUL characters")
    return values
