"""Bodies a route reads itself (PATCH, arrays) and free-form members (an item's
``fields``, a filter's query): parsed, and encoded as JSON for the services with every
value the services cannot take named in a 400."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from starlette.requests import Request

from plumbline.common import int64
from plumbline.common.errors import InvalidArgument


async def read_json(request: Request) -> Any:
    """A body the route reads itself (PATCH, arrays); ``json_bytes`` checks its values."""
    raw = await request.body()
    try:
        body = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError as exc:
        raise InvalidArgument(f"The request body is not valid JSON ({exc}).") from None
    return body


async def read_patch(request: Request) -> bytes:
    """A PATCH body: a JSON array of operations, as JSON for the service that applies them."""
    operations = await read_json(request)
    if not isinstance(operations, list):
        raise InvalidArgument("The body must be a JSON array of patch operations.")
    return json_bytes(operations, "the body")


def free_json(value: Any, where: str) -> bytes:
    """``value`` as JSON for a service; ``where`` names it in errors (``fields``).

    The services keep integers in 64 bits: a wider one is a 400 that says where it is and
    what fits, instead of a 500 from the JSON encoder or the database.
    """
    for leaf, trail in _leaves(value):
        if isinstance(leaf, int) and not isinstance(leaf, bool) and not int64.fits(leaf):
            raise int64.out_of_range(_where(where, trail), leaf)
    return json_bytes(value, where)


def json_bytes(value: Any, where: str) -> bytes:
    """``value`` as JSON; what cannot be sent or stored is a 400 naming where it is.

    The encoder refuses wide integers, unpaired surrogates and deep nesting; PostgreSQL
    refuses NUL in text (``\\u0000`` in the encoding, a cheap test on the way out).
    """
    try:
        encoded = orjson.dumps(value)
    except orjson.JSONEncodeError:
        encoded = None
    if encoded is not None and b"\\u0000" not in encoded:
        return encoded
    for leaf, trail in _leaves(value):
        if isinstance(leaf, str):
            if "\x00" in leaf:
                raise InvalidArgument(f"{_where(where, trail)} must not contain NUL characters.")
            try:
                leaf.encode()
            except UnicodeEncodeError:
                raise InvalidArgument(
                    f"{_where(where, trail)} is not valid Unicode: it holds an unpaired "
                    "surrogate (a \\uD800-\\uDFFF escape without its partner)."
                ) from None
        elif isinstance(leaf, int) and not isinstance(leaf, bool) and not int64.fits(leaf):
            raise int64.out_of_range(_where(where, trail), leaf)
    if encoded is not None:
        return encoded  # "\\u0000" spelled out in a value, not a NUL
    raise InvalidArgument(f"{where} nests arrays and objects too deeply (at most 254 levels).")


def _leaves(value: Any) -> Iterator[tuple[Any, Any]]:
    """Every scalar and object key in ``value``, with its trail: ``(key, parent trail)``."""
    pending: list[tuple[Any, Any]] = [(value, None)]
    while pending:
        item, trail = pending.pop()
        if isinstance(item, dict):
            for key, member in item.items():
                yield key, (key, trail)
                pending.append((member, (key, trail)))
        elif isinstance(item, list):
            pending.extend((member, (index, trail)) for index, member in enumerate(item))
        else:
            yield item, trail


def _where(root: str, trail: Any) -> str:
    keys: list[Any] = []
    while trail is not None:
        key, trail = trail
        keys.append(key)
    path = root + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in reversed(keys))
    # A key may itself hold the unpaired surrogate being reported: show it escaped.
    return path.encode("utf-8", "backslashreplace").decode()


# PATCH bodies are read as JSON and checked where they are applied (the items service,
# ``libs/common/jsonpatch.py``, with the contract's messages); these types describe them.
