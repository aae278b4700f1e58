"""Relationships followed level by level from many roots at once: the walk shared by the
live traces (items' relationships) and the historic ones (the history's spans).

Each root reaches an abstract item at most once, at its nearest level (the first
relationship by id that reached it), so a cycle in the graph ends. Where the
relationships come from, and which of them the caller may follow, is the caller's
``fetch``: one call per level with every item of the frontier.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from plumbline.common.errors import InvalidArgument

#: How deep a trace or an impact may go.
MAX_DEPTH = 5
#: The most steps one answer holds: past it the caller is told to ask for fewer roots or
#: less depth (a dense graph at depth 5 could otherwise reach the whole database).
MAX_STEPS = 50_000


class Edge(Protocol):
    """A relationship as ``fetch`` answers it: from ``mine`` (in the frontier) to
    ``other``."""

    @property
    def mine(self) -> int: ...
    @property
    def other(self) -> int: ...
    @property
    def id(self) -> int: ...
    @property
    def relationship_type(self) -> int | None: ...
    @property
    def suspect(self) -> bool | None: ...


@dataclass(frozen=True)
class Step:
    """One relationship followed: ``item`` reached from ``parent`` at ``level`` of the
    trace of ``root``."""

    root: int
    level: int
    parent: int
    item: int
    relationship: int
    relationship_type: int
    suspect: bool


def check_depth(depth: int) -> int:
    """``depth`` when it is allowed, else an ``InvalidArgument`` saying what is."""
    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidArgument(f"depth: {depth} is not allowed; allowed: 1 to {MAX_DEPTH}.")
    return depth


async def follow(
    roots: Sequence[int],
    depth: int,
    fetch: Callable[[list[int]], Awaitable[Sequence[Edge]]],
) -> list[Step]:
    """The steps from each root, level by level, in (root order, level, parent, id)."""
    seen: dict[int, set[int]] = {root: {root} for root in roots}
    frontier: dict[int, list[int]] = defaultdict(list)
    for root in roots:
        frontier[root].append(root)
    steps: list[Step] = []
    for level in range(1, depth + 1):
        if not frontier:
            break
        rows = sorted(await fetch(sorted(frontier)), key=lambda r: (r.mine, r.id))
        following: dict[int, list[int]] = defaultdict(list)
        for row in rows:
            for root in frontier[row.mine]:
                if row.other in seen[root]:
                    continue
                seen[root].add(row.other)
                following[row.other].append(root)
                steps.append(
                    Step(
                        root,
                        level,
                        row.mine,
                        row.other,
                        row.id,
                        int(row.relationship_type or 0),
                        bool(row.suspect),
                    )
                )
        if len(steps) > MAX_STEPS:
            raise InvalidArgument(
                f"The trace reaches more than {MAX_STEPS} relationships: ask for fewer "
                "items (maxResults) or less depth."
            )
        frontier = following
    order = {root: n for n, root in enumerate(roots)}
    steps.sort(key=lambda s: (order[s.root], s.level, s.parent, s.relationship))
    return steps
