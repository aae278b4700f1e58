"""Merging several owners' sorted results into one page."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from plumbline.gateway.routes.abstractitems import merge_pages


def _record(n: int) -> dict[str, Any]:
    return {
        "id": n,
        "documentKey": f"K-{n:05d}",
        "fields": {},
        "project": 1,
        "location": {"globalSortOrder": n},
    }


@given(
    st.lists(
        st.lists(st.integers(min_value=1, max_value=10_000), unique=True), min_size=1, max_size=4
    ),
    st.integers(min_value=0, max_value=30),
    st.integers(min_value=1, max_value=50),
    st.booleans(),
)
def test_merge_equals_sorting_everything(
    owners: list[list[int]], start: int, size: int, descending: bool
) -> None:
    seen: set[int] = set()
    disjoint = []
    for ids in owners:
        ids = [i for i in ids if i not in seen]
        seen.update(ids)
        disjoint.append(ids)
    everything = sorted(seen, reverse=descending)
    # Each owner sends only its first start + size records, already in order.
    streams = [
        [_record(i) for i in sorted(ids, reverse=descending)[: start + size]] for ids in disjoint
    ]
    page = merge_pages(streams, "id", descending, start, size)
    assert [r["id"] for r in page] == everything[start : start + size]
