"""Error envelopes read the same on every supported Python."""

from __future__ import annotations

import httpx
import pytest

from plumbline.gateway.envelope import reason_phrase


@pytest.mark.parametrize("status", [400, 401, 404, 405, 408, 413, 414, 416, 422, 429, 500, 503])
def test_reason_phrases_are_the_classic_ones(status: int) -> None:
    # httpx keeps its own table of the phrases clients have always seen; Python 3.13's
    # http module renamed 413, 414, 416 and 422.
    assert reason_phrase(status) == httpx.codes.get_reason_phrase(status)
