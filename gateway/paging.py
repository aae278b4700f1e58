"""``startAt`` and ``maxResults``: the one paging helper."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from plumbline.common.errors import InvalidArgument
from plumbline.core.v1 import core_pb2

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


def _integer(request: Request, name: str) -> int | None:
    values = request.query_params.getlist(name)
    if not values:
        return None
    if len(values) > 1:
        raise InvalidArgument(f"{name} may be given once, got {len(values)} values")
    text = values[0].strip()
    try:
        return int(text)
    except ValueError:
        raise InvalidArgument(f"{name} must be an integer, got {values[0]!r}") from None


def parse_page(request: Request) -> Page:
    """Reads and checks the page parameters of a list request."""
    start_at = _integer(request, "startAt")
    max_results = _integer(request, "maxResults")
    if start_at is None:
        start_at = 0
    if max_results is None:
        max_results = DEFAULT_MAX_RESULTS
    if not 0 <= start_at <= MAX_START:
        raise InvalidArgument(f"startAt must be between 0 and {MAX_START}, got {start_at}")
    if not 1 <= max_results <= MAX_RESULTS:
        raise InvalidArgument(f"maxResults must be between 1 and {MAX_RESULTS}, got {max_results}")
    return Page(start_at, max_results)
