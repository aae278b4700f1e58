"""Tables kept in a process's memory under a cap: full, they shed what has expired, and
all of it when that is not enough (what is forgotten is only asked for again)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def with_room(table: dict[K, V], alive: Callable[[V], bool], keep_under: int) -> dict[K, V]:
    """``table`` without the entries no longer ``alive``; empty when more than
    ``keep_under`` are left. For a table found full, before adding to it."""
    kept = {key: value for key, value in table.items() if alive(value)}
    return {} if len(kept) >= keep_under else kept
