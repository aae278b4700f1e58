"""Targets, their order, and the topology checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from plumbline.common.errors import InvalidArgument
from plumbline.common.settings import Settings
from plumbline.modules import resolve
from plumbline.runner import check_topology


def test_all_starts_the_gateway_last() -> None:
    assert resolve("all") == ("identity", "items", "activity", "gateway")


def test_a_subset_keeps_dependency_order() -> None:
    assert resolve("gateway,identity") == ("identity", "gateway")
    assert resolve("activity, items") == ("items", "activity")


def test_unknown_targets_list_the_valid_ones() -> None:
    with pytest.raises(InvalidArgument, match="identity, items, activity, gateway"):
        resolve("items,reports")
    with pytest.raises(InvalidArgument):
        resolve(" , ")


def test_topology_checks(tmp_path: Path) -> None:
    embedded = Settings(data_dir=tmp_path)
    assert check_topology(embedded, resolve("all")) is True
    with pytest.raises(InvalidArgument, match="memory://"):
        check_topology(embedded, resolve("identity"))
    split = Settings(data_dir=tmp_path, bus_url="nats://127.0.0.1:4222")
    assert check_topology(split, resolve("identity")) is False
    assert check_topology(split, resolve("all")) is False
    wrong_db = Settings(bus_url="nats://x:4222", database_url="mysql://u@h/{service}")
    with pytest.raises(InvalidArgument, match="unsupported database URL"):
        check_topology(wrong_db, resolve("items"))
