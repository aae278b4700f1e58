"""JSON values for the services: encoded, or parsed once, with every value a service
cannot take (an integer wider than 64 bits, an unpaired surrogate, NUL, nesting deeper
than 254 levels) named in a 400 that says where it is."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from plumbline.common import int64
from plumbline.common.errors import InvalidArgument

MAX_DEPTH = 254


def parse(raw: bytes, where: str) -> Any:
    """``raw`` parsed: a 400 for what is not JSON, or holds NUL or nests too deeply.

    The parser itself refuses unpaired surrogates and reads integers wider than 64 bits
    as floats, so only NUL (PostgreSQL refuses it in text) and depth are left to check;
    both are looked for only when the raw text could hold them.
    """
    value = loads(raw)
    if b"\\u0000" in raw or raw.count(b"[") + raw.count(b"{") > MAX_DEPTH:
        _check_parsed(value, where)
    return value


def loads(raw: bytes) -> Any:
    """``raw`` parsed (None when empty), or the 400 that says why it is not JSON."""
    try:
        return orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError as exc:
        raise InvalidArgument(f"The request body is not valid JSON ({exc}).") from None


def _check_parsed(value: Any, where: str) -> None:
    """NUL in a string or a key, and containers nested deeper than ``MAX_DEPTH``."""
    pending: list[tuple[Any, Any, int]] = [(value, None, 0)]
    while pending:
        item, trail, depth = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise InvalidArgument(f"{_where(where, trail)} must not contain NUL characters.")
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth == MAX_DEPTH:
            raise _too_deep(where)
        members = item.items() if isinstance(item, dict) else enumerate(item)
        for key, member in members:
            if isinstance(key, str) and "\x00" in key:
                raise InvalidArgument(
                    f"{_where(where, (key, trail))} must not contain NUL characters."
                )
            pending.append((member, (key, trail), depth + 1))


def _too_deep(where: str) -> InvalidArgument:
    return InvalidArgument(
        f"{where} nests arrays and objects too deeply (at most {MAX_DEPTH} levels)."
    )


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
    raise _too_deep(where)


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
