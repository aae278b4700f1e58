"""Merging several owners' sorted results into one page."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from plumbline.gateway.routes.abstractitems import SORT_KEYS, merge_pages


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


def _test_record(n: int, project: int) -> dict[str, Any]:
    # Created in an order of their own: their ids come from each replica's block.
    created = f"2026-01-01T00:00:{(n * 7919) % 60:02d}.000+0000"
    return {
        "id": n,
        "documentKey": f"T-{n:05d}",
        "fields": {"name": None},
        "project": project,
        "createdDate": created,
    }


@given(
    st.lists(st.tuples(st.integers(1, 3), st.integers(1, 10_000)), unique_by=lambda t: t[1]),
    st.lists(st.tuples(st.integers(1, 3), st.integers(10_001, 20_000)), unique_by=lambda t: t[1]),
    st.sampled_from(["sequence", "name", "id"]),
    st.booleans(),
)
def test_test_records_merge_with_items_in_tree_order(
    items: list[tuple[int, int]],
    tests: list[tuple[int, int]],
    field: str,
    descending: bool,
) -> None:
    """Test records have no location: in tree order they follow their project's items, as
    created; a name that is null sorts as empty. Nothing about them breaks the merge."""
    item_records = [{**_record(n), "project": p} for p, n in items]
    test_records = [_test_record(n, p) for p, n in tests]
    key = SORT_KEYS[field]
    streams = [
        sorted(item_records, key=key, reverse=descending),
        sorted(test_records, key=key, reverse=descending),
    ]
    page = merge_pages(streams, field, descending, 0, 50)
    expected = sorted(item_records + test_records, key=key, reverse=descending)[:50]
    assert [key(r) for r in page] == [key(r) for r in expected]
    if field == "sequence" and not descending:
        for before, after in itertools.pairwise(page):
            if before["project"] == after["project"] and "location" not in before:
                assert "location" not in after, "an item after a test record of its project"
