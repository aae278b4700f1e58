"""Query parameters as FastAPI dependencies: declared once, for the description and the read.

A route names a parameter in its signature, ``project: RequiredProject``, where::

    RequiredProject = Annotated[
        int, Depends(query.integer("project", required=True, description="The project's id."))
    ]

The dependency declares the parameter to FastAPI (so the OpenAPI description shows its
name, type, range and whether it is required) and parses the values the request carries
with ``gateway/params.py``, which words the errors. FastAPI itself only collects the raw
strings (every value, so that a repeated single parameter is an error): the declared
type is the JSON schema given here (``openapi.py`` puts it in the description whole),
never a FastAPI conversion with its own messages. A missing required parameter is
FastAPI's one check; ``gateway/errors.py`` words it as "the query parameter project is
required".

Every parameter is read after the caller is authenticated: a request without valid
credentials is a 401 whatever its parameters.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar, overload

from fastapi import Depends, Query
from pydantic import WithJsonSchema
from starlette.requests import Request

from plumbline.common.context import Principal
from plumbline.common.dates import format_datetime, parse_date_range, parse_datetime
from plumbline.common.errors import InvalidArgument
from plumbline.gateway import params
from plumbline.gateway.auth import caller

T = TypeVar("T")

INT64: dict[str, Any] = {"type": "integer", "format": "int64"}
_KEYWORD = inspect.Parameter.KEYWORD_ONLY


def _declare(
    name: str,
    schema: dict[str, Any],
    read: Callable[[Request, Sequence[str]], T],
    description: str,
    required: bool,
) -> Callable[..., Awaitable[T]]:
    raw = Annotated[
        list[str] | None,
        Query(alias=name, description=description),
        WithJsonSchema(copy.deepcopy(schema)),
    ]

    async def dependency(request: Request, **values: Any) -> T:
        return read(request, values["raw"] or [])

    # FastAPI reads parameters from the signature; this one is built, not written, so
    # that the name and schema given here are what it declares.
    empty = inspect.Parameter.empty
    dependency.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("request", _KEYWORD, annotation=Request),
            inspect.Parameter("caller", _KEYWORD, annotation=Principal, default=Depends(caller)),
            inspect.Parameter("raw", _KEYWORD, annotation=raw, default=empty if required else None),
        ]
    )
    dependency.__name__ = f"query_{name}"
    return dependency


def parameter(
    name: str,
    schema: dict[str, Any],
    parse: Callable[[Sequence[str]], T],
    *,
    description: str,
    required: bool = False,
) -> Callable[..., Awaitable[T]]:
    """A dependency that declares query parameter ``name`` and returns ``parse(values)``."""
    return _declare(name, schema, lambda _, values: parse(values), description, required)


def from_request(
    name: str, schema: dict[str, Any], read: Callable[[Request], T], *, description: str
) -> Callable[..., Awaitable[T]]:
    """A parameter that ``read`` takes from the request itself.

    For parameters read where only the request is at hand (a helper several routes
    share, a name clients spell in any capitalisation): the route declares the
    dependency, which checks the value before the route runs, and the helper calls the
    same ``read``.
    """
    return _declare(name, schema, lambda request, _: read(request), description, False)


@overload
def integer(
    name: str,
    *,
    description: str,
    required: Literal[True],
    minimum: int | None = None,
    maximum: int | None = None,
) -> Callable[..., Awaitable[int]]: ...


@overload
def integer(
    name: str,
    *,
    description: str,
    required: Literal[False] = False,
    minimum: int | None = None,
    maximum: int | None = None,
) -> Callable[..., Awaitable[int | None]]: ...


def integer(
    name: str,
    *,
    description: str,
    required: bool = False,
    minimum: int | None = None,
    maximum: int | None = None,
) -> Callable[..., Awaitable[int | None]] | Callable[..., Awaitable[int]]:
    """A single integer (int64, or within ``minimum`` and ``maximum`` when both are given)."""
    schema: dict[str, Any] = dict(INT64)
    if minimum is not None and maximum is not None:
        schema.update(minimum=minimum, maximum=maximum)

    def parse(values: Sequence[str]) -> int | None:
        return params.integer(values, name, required, minimum, maximum)

    return parameter(name, schema, parse, description=description, required=required)


def paging(
    name: str, *, description: str, minimum: int, maximum: int, default: int
) -> Callable[..., Awaitable[int]]:
    """A single integer within a range, ``default`` when absent (``startAt``, ``maxResults``)."""
    schema = {**INT64, "minimum": minimum, "maximum": maximum, "default": default}

    def parse(values: Sequence[str]) -> int:
        number = params.integer(values, name, False, minimum, maximum)
        return default if number is None else number

    return parameter(name, schema, parse, description=description)


def integers(name: str, *, description: str) -> Callable[..., Awaitable[list[int]]]:
    """A repeatable integer parameter."""
    schema = {"type": "array", "items": INT64}
    return parameter(
        name, schema, lambda values: params.integers(values, name), description=description
    )


def boolean(
    name: str, *, description: str, default: bool = False
) -> Callable[..., Awaitable[bool]]:
    """A boolean parameter (``true`` or ``false``)."""
    schema = {"type": "boolean", "default": default}
    return parameter(
        name, schema, lambda values: params.boolean(values, name, default), description=description
    )


def strings(
    name: str, *, description: str, max_length: int = 255, enum: Sequence[str] = ()
) -> Callable[..., Awaitable[list[str]]]:
    """A repeatable string parameter; ``enum`` lists the values it may take."""
    item: dict[str, Any] = {"type": "string", "maxLength": max_length}
    if enum:
        item = {"type": "string", "enum": list(enum)}
    schema = {"type": "array", "items": item}
    return parameter(
        name,
        schema,
        lambda values: params.strings(values, name, max_length),
        description=description,
    )


@overload
def moment(
    name: str, *, description: str, required: Literal[True]
) -> Callable[..., Awaitable[str]]: ...


@overload
def moment(
    name: str, *, description: str, required: Literal[False] = False
) -> Callable[..., Awaitable[str | None]]: ...


def moment(
    name: str, *, description: str, required: bool = False
) -> Callable[..., Awaitable[str | None]] | Callable[..., Awaitable[str]]:
    """One date (yyyy-MM-dd'T'HH:mm:ss.SSSZ, milliseconds optional), in the form the
    services exchange; None when absent and not required."""

    def parse(values: Sequence[str]) -> str | None:
        value = params.single(values, name, required)
        return None if value is None else format_datetime(parse_datetime(value, name))

    schema = {"type": "string"}
    return parameter(name, schema, parse, description=description, required=required)


DateRange = tuple[datetime, datetime | None]


def date_range(name: str, what: str) -> Callable[..., Awaitable[DateRange | None]]:
    """One date (at or after) or two (an inclusive range); None when absent."""
    schema = {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2}
    description = (
        f"{what} at or after one date, or between two (yyyy-MM-dd'T'HH:mm:ss.SSSZ, "
        "milliseconds optional)."
    )

    def parse(values: Sequence[str]) -> DateRange | None:
        return parse_date_range(list(values), name) if values else None

    return parameter(name, schema, parse, description=description)


#: The parameters several resource families share.
RequiredProject = Annotated[
    int, Depends(integer("project", required=True, description="The project's id."))
]
OptionalProject = Annotated[
    int | None, Depends(integer("project", description="Only records of this project."))
]


def choices(name: str, allowed: tuple[str, ...], description: str) -> Any:
    """A repeatable parameter that takes one of ``allowed`` (in any capitalisation)."""

    def parse(raw: Sequence[str]) -> list[str]:
        values = [v.strip().upper() for v in params.strings(raw, name)]
        for value in values:
            if value not in allowed:
                raise InvalidArgument(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        return values

    schema = {"type": "array", "items": {"type": "string", "enum": list(allowed)}}
    return Depends(parameter(name, schema, parse, description=description))
