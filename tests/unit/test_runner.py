"""The topology checks run before any module starts, and what a started process settles."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from plumbline.common.errors import InvalidArgument
from plumbline.common.settings import Settings
from plumbline.health import ProcessState
from plumbline.modules import resolve
from plumbline.runner import _settle_memory, check_topology


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("PLUMBLINE_"):
            monkeypatch.delenv(name)


def test_all_with_sqlite_and_memory_is_the_embedded_default(tmp_path: Path) -> None:
    assert check_topology(Settings(data_dir=tmp_path), resolve("all")) is True


@pytest.mark.parametrize("targets", ["identity", "items,activity", "gateway", "identity,gateway"])
def test_the_memory_bus_refuses_split_targets(tmp_path: Path, targets: str) -> None:
    with pytest.raises(InvalidArgument, match="memory://") as info:
        check_topology(Settings(data_dir=tmp_path), resolve(targets))
    assert "PLUMBLINE_BUS_URL" in info.value.message


def test_split_targets_on_nats_are_not_embedded(tmp_path: Path) -> None:
    split = Settings(data_dir=tmp_path, bus_url="nats://127.0.0.1:4222")
    assert check_topology(split, resolve("identity")) is False
    assert check_topology(split, resolve("gateway")) is False
    assert check_topology(split, resolve("all")) is False


def test_postgres_is_not_embedded(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, database_url="postgresql+asyncpg://u@h/pl_{service}")
    assert check_topology(settings, resolve("all")) is False


@pytest.mark.parametrize(
    "url",
    ["mysql://u@h/{service}", "postgresql://u@h/{service}", "sqlite:///tmp/{service}.db"],
)
def test_an_unsupported_database_url_is_refused(url: str) -> None:
    settings = Settings(bus_url="nats://x:4222", database_url=url)
    with pytest.raises(InvalidArgument, match="unsupported database URL"):
        check_topology(settings, resolve("items"))


def test_the_gateway_alone_needs_no_database() -> None:
    settings = Settings(bus_url="nats://x:4222", database_url="mysql://u@h/{service}")
    assert check_topology(settings, resolve("gateway")) is False


def test_a_per_service_override_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLUMBLINE_ACTIVITY_DATABASE_URL", "mysql://u@h/feed")
    settings = Settings(data_dir=tmp_path, bus_url="nats://x:4222")
    assert check_topology(settings, resolve("items")) is False
    with pytest.raises(InvalidArgument, match="unsupported database URL"):
        check_topology(settings, resolve("activity"))


@pytest.mark.parametrize(
    "address", ["items:9090", "10.0.0.7:9090,10.0.0.8:9090", "dns:///items-headless:9090"]
)
def test_every_address_form_is_accepted(address: str) -> None:
    settings = Settings(bus_url="nats://x:4222", items_addr=address, testmgmt_addr=address)
    assert check_topology(settings, resolve("gateway")) is False


def test_an_invalid_address_is_refused_before_anything_starts() -> None:
    settings = Settings(bus_url="nats://x:4222", testmgmt_addr="testmgmt-0:9090,testmgmt-1:9090")
    with pytest.raises(InvalidArgument) as info:
        check_topology(settings, resolve("gateway"))
    assert info.value.message.startswith(
        "PLUMBLINE_TESTMGMT_ADDR: The testmgmt service's address "
        "'testmgmt-0:9090,testmgmt-1:9090' is not valid: a comma list must name IP addresses"
    )


def test_a_started_process_keeps_what_it_built_out_of_the_collectors_walks() -> None:
    made_at_start = [{"row": n} for n in range(1000)]
    state = ProcessState(targets=("items",))
    try:
        _settle_memory(state)
        assert state.ready
        assert gc.get_freeze_count() >= len(made_at_start)
        # What serving makes afterwards is still collected.
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()
