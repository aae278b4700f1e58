"""The data set sizes each bench run measures the items rows at."""

from __future__ import annotations

import argparse

import pytest

from bench.__main__ import sizes_of


@pytest.mark.parametrize(
    ("size", "topology", "only", "wanted"),
    [
        ("small", "embedded", "all", (2_000,)),
        ("normal", "distributed", "items", (2_000, 20_000)),
        ("large", "embedded", "all", (2_000, 20_000, 200_000)),
        ("large", "distributed", "all", (2_000, 20_000, 200_000, 1_000_000)),
        ("large", "distributed", "history", ()),
    ],
)
def test_a_million_items_only_distributed_at_large(
    size: str, topology: str, only: str, wanted: tuple[int, ...]
) -> None:
    args = argparse.Namespace(size=size, topology=topology, only=only)
    assert sizes_of(args) == wanted
