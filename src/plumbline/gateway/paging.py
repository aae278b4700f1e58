"""``startAt`` and ``maxResults``: the one paging helper (``deps.Paging`` reads them)."""

from __future__ import annotations

from dataclasses import dataclass

from plumbline.api.core.v1 import core_pb2

DEFAULT_MAX_RESULTS = 20
MAX_RESULTS = 50
MAX_START = 2**31 - 1


@dataclass(frozen=True)
class Page:
    """A validated page request."""

    start_at: int = 0
    max_results: int = DEFAULT_MAX_RESULTS

    def message(self) -> core_pb2.Page:
        """The page as a gRPC message."""
        return core_pb2.Page(start_at=self.start_at, max_results=self.max_results)
