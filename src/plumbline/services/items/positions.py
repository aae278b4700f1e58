"""Where recent pages of a project's items began, while the project's tree stands.

A page at ``startAt`` n of a project (``GET /items?project=``, in project order) has to
find its n-th item; with nothing known, that is a walk of n index entries (an OFFSET),
which grows with n: paging through a 100,000-item project, as the public clients do
(``startAt`` += ``maxResults``), costs more with every page. Each page served tells
where the next one begins (after its last item's global order) and where it began
itself; while the project's ``tree_changes`` stands (every write that adds, removes or
moves its items takes the tree lock and counts it), those places are exact, so the next
page, or the same one again, is an index seek instead of a walk. A write to the project
changes the key, so nothing stale is ever used. A jump to a page nobody asked for since
the last change still walks.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

#: Places kept per process (a few hundred bytes each).
SIZE = 4096


class Key(NamedTuple):
    project: int
    root_only: bool
    tree_changes: int
    start_at: int


class Place(NamedTuple):
    """The page at the key's ``start_at`` begins at ``order`` (``after``: just after it)."""

    after: bool
    order: int


class Positions:
    """The places of recently served pages, the least recently used dropped first."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._known: OrderedDict[Key, Place] = OrderedDict()

    def find(self, key: Key) -> Place | None:
        place = self._known.get(key)
        if place is not None:
            self._known.move_to_end(key)
        return place

    def keep(self, key: Key, place: Place) -> None:
        self._known[key] = place
        self._known.move_to_end(key)
        while len(self._known) > self.size:
            self._known.popitem(last=False)

    def served(self, key: Key, orders: list[int]) -> None:
        """A page at ``key`` held items of these global ``orders``, in order."""
        if not orders:
            return
        self.keep(key, Place(False, orders[0]))
        self.keep(key._replace(start_at=key.start_at + len(orders)), Place(True, orders[-1]))
