"""How many gateway workers the embedded default starts, and what each is told."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plumbline.common.settings import SERVICES
from plumbline.workers import (
    ANALYTICS,
    MAX_WORKERS,
    analytics_environment,
    cpu_limit,
    loopback,
    loopback_host,
    usable_cores,
    worker_count,
    worker_environment,
)


@pytest.mark.parametrize(
    ("cores", "expected"),
    [(1, 0), (2, 2), (3, 3), (4, 4), (8, MAX_WORKERS), (64, MAX_WORKERS)],
)
def test_one_worker_per_core_none_on_a_single_core(cores: int, expected: int) -> None:
    assert worker_count(None, cores) == expected


@pytest.mark.parametrize("setting", [0, 1, 3, 12])
def test_the_setting_wins_over_the_cores(setting: int) -> None:
    assert worker_count(setting, 16) == setting
    assert worker_count(setting, 1) == setting


def test_usable_cores_are_this_process_s_affinity(tmp_path: Path) -> None:
    assert usable_cores(tmp_path / "no-cgroup") == len(os.sched_getaffinity(0))


def test_a_container_s_cpu_limit_caps_the_cores(tmp_path: Path) -> None:
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("100000 100000\n")  # one core's worth
    assert usable_cores(cpu_max) == 1
    cpu_max.write_text("max 100000\n")
    assert usable_cores(cpu_max) == len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("cpu_max", "cores"),
    [("max 100000", None), ("150000 100000", 2), ("50000 100000", 1), ("400000 100000", 4)],
)
def test_cpu_limits_round_up_to_whole_cores(cpu_max: str, cores: int | None) -> None:
    assert cpu_limit(cpu_max) == cores


@pytest.mark.parametrize(
    ("host", "reached"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("0.0.0.0", "127.0.0.1"),
        ("::", "[::1]"),
        ("::1", "[::1]"),
        ("10.1.2.3", "10.1.2.3"),
    ],
)
def test_workers_reach_the_services_where_they_listen(host: str, reached: str) -> None:
    assert loopback(host) == reached


def test_a_worker_is_a_gateway_with_the_services_and_the_bus_of_this_process() -> None:
    given = {
        "PLUMBLINE_READY_FILE": "/tmp/never.json",
        "PLUMBLINE_BUS_URL": "memory://",
        "PLUMBLINE_TENANT": "acme",
        "PATH": "/usr/bin",
    }
    env = worker_environment(given, "127.0.0.1:9090", "127.0.0.1")
    for service in SERVICES:
        assert env[f"PLUMBLINE_{service.upper()}_ADDR"] == "127.0.0.1:9090"
    assert env["PLUMBLINE_BUS_URL"] == "follow://127.0.0.1:9090"
    assert env["PLUMBLINE_HOST"] == "127.0.0.1"
    assert env["PLUMBLINE_WORKERS"] == "0"  # a worker starts no workers of its own
    assert env["PLUMBLINE_TENANT"] == "acme"  # every other setting as given
    assert env["PATH"] == "/usr/bin"
    assert "PLUMBLINE_READY_FILE" not in env  # its own comes as --ready-file


def test_the_analytics_process_runs_its_own_targets_and_migrations() -> None:
    given = {
        "PLUMBLINE_READY_FILE": "/tmp/never.json",
        "PLUMBLINE_BUS_URL": "memory://",
        "PLUMBLINE_REPORTS_ADDR": "10.0.0.9:9090",
        "PLUMBLINE_DATA_DIR": "/srv/plumbline",
    }
    env = analytics_environment(given, "127.0.0.1:9090", "127.0.0.1", 8181)
    assert ANALYTICS == ("trace", "reports")
    for target in ANALYTICS:  # served in itself, not asked of the services' process
        assert f"PLUMBLINE_{target.upper()}_ADDR" not in env
    for service in SERVICES:
        if service not in ANALYTICS:
            assert env[f"PLUMBLINE_{service.upper()}_ADDR"] == "127.0.0.1:9090"
    assert env["PLUMBLINE_BUS_URL"] == "follow://127.0.0.1:9090"
    assert env["PLUMBLINE_MIGRATE_ON_START"] == "true"  # reports' database is its alone
    assert env["PLUMBLINE_GATEWAY_URL"] == "http://127.0.0.1:8181"  # reports read its own
    assert env["PLUMBLINE_DATA_DIR"] == "/srv/plumbline"  # the same SQLite files
    assert env["PLUMBLINE_WORKERS"] == "0"
    assert "PLUMBLINE_READY_FILE" not in env


def test_the_analytics_process_reads_the_api_through_its_own_gateway() -> None:
    """Its reports read the API at its own port, not the workers' (nor a configured URL,
    which the workers' requests also reach)."""
    given = {"PLUMBLINE_GATEWAY_URL": "https://plumbline.example.com"}
    env = analytics_environment(given, "[::1]:9090", "::1", 8181)
    assert env["PLUMBLINE_GATEWAY_URL"] == "http://[::1]:8181"


@pytest.mark.parametrize(
    ("host", "local"),
    [("0.0.0.0", "127.0.0.1"), ("127.0.0.1", "127.0.0.1"), ("::", "::1"), ("::1", "::1")],
)
def test_the_analytics_process_listens_on_loopback_only(host: str, local: str) -> None:
    assert loopback_host(host) == local
