"""Running the driver: how long an open-loop run is, and the CPU each process spends per
request around a run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.drive import (
    DRIVER,
    ELSEWHERE,
    OPEN_LOOP_MIN,
    open_loop_requests,
    other_cores,
    system_ms,
    timed_cpu,
)
from tests.e2e.topology import Process, System

#: Burns 0.2 s of CPU, says so, and waits to be stopped.
BURN = (
    "import sys, time\n"
    "t = time.process_time()\n"
    "while time.process_time() - t < 0.2: pass\n"
    "print('done', flush=True)\n"
    "sys.stdin.read()\n"
)


def test_an_open_loop_run_lasts_6_to_12_seconds_and_gets_enough_for_p999() -> None:
    # Fast operations: 6 s are plenty.
    assert open_loop_requests(400.0) == 2_400
    # Slower ones run longer, for the requests p99.9 needs...
    assert open_loop_requests(100.0) == OPEN_LOOP_MIN
    # ...but never past 12 s.
    assert open_loop_requests(30.0) == 360


def test_the_systems_cpu_leaves_out_the_driver_and_the_rest_of_the_machine() -> None:
    table: list[dict[str, Any]] = [
        {"process": "gateway", "cores": 0.5, "cpu_ms_per_request": 1.25, "system": True},
        {"process": "items", "cores": 0.4, "cpu_ms_per_request": 1.0, "system": True},
        {"process": DRIVER, "cores": 0.1, "cpu_ms_per_request": 0.3, "system": False},
        {"process": ELSEWHERE, "cores": 0.25, "cpu_ms_per_request": 0.6, "system": False},
    ]
    assert system_ms(table) == 2.25
    assert other_cores(table) == 0.25


def test_a_run_is_bracketed_by_cpu_samples_of_the_serving_process(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", BURN], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    system = System(
        topology="embedded",
        workdir=tmp_path,
        admin_password="-",
        processes=[Process("all", child, tmp_path / "log", {})],
    )

    def run() -> dict[str, Any]:
        assert child.stdout is not None
        assert child.stdout.readline() == b"done\n"
        return {"requests": 90, "rps": 900.0, "driver_cpu": 0.5, "warmup_requests": 10}

    try:
        result, table = timed_cpu(system, [], run)
    finally:
        child.kill()
        child.wait()
    assert result["requests"] == 90
    rows = {p["process"]: p for p in table}
    served = rows["plumbline (all services)"]
    assert served["system"]
    assert served["cpu_s"] >= 0.15
    # Per request served, the 10 warm-up requests included.
    assert served["cpu_ms_per_request"] == 1000 * served["cpu_s"] / 100
    # The driver's timed part: 0.5 of a core for 90 requests at 900/s.
    assert rows[DRIVER]["cpu_s"] == 0.05
    assert not rows[DRIVER]["system"]
    assert not rows[ELSEWHERE]["system"]
    assert system_ms(table) == served["cpu_ms_per_request"]
    assert any(p["process"].startswith("idle") for p in table)
