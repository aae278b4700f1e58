"""The bench's growth table, CPU and open-loop tables, and target verdicts, from rows of
known figures."""

from __future__ import annotations

from typing import Any

from bench.report import report
from bench.targets import growth, miss, targets


def _row(
    operation: str,
    size: int,
    c: int,
    rps: float,
    bare: float,
    *,
    p99: float = 10.0,
    read: bool = True,
) -> dict[str, Any]:
    return {
        "operation": operation,
        "size": size,
        "concurrency": c,
        "rps": rps,
        "p50_ms": 1.0,
        "p99_ms": p99,
        "errors": 0,
        "driver_cpu": 0.1,
        "bare_rps": bare,
        "ratio_to_bare": rps / bare,
        "read": read,
    }


def _rows() -> list[dict[str, Any]]:
    rows = []
    for size, item_rps, bare in ((2_000, 400, 1000), (20_000, 280, 900)):
        for c in (1, 32):
            rows += [
                _row("GET /items/{id}", size, c, item_rps, bare, p99=20.0),
                _row("GET /users/current (Basic)", size, c, 500, bare),
                _row("GET /users/current (Bearer)", size, c, 525, bare),
                _row("GET /items?project first page", size, c, 200, bare),
            ]
    rows += [
        _row("GET /items?project startAt=10000", 20_000, 1, 50, 900),
        _row("GET /items?project startAt=10000", 20_000, 32, 150, 900),
        _row("POST /items", 20_000, 32, 60, 900, p99=80.0, read=False),
    ]
    return rows


def test_growth_is_the_cost_ratio_raw_and_against_the_bare_endpoint() -> None:
    grown = {(g["operation"], g["concurrency"]): g for g in growth(_rows(), 2_000, 20_000)}
    item = grown[("GET /items/{id}", 32)]
    assert item["growth"] == 400 / 280
    assert item["growth_vs_bare"] == (400 / 1000) / (280 / 900)
    # Writes and operations measured at one size only have no growth.
    assert ("POST /items", 32) not in grown
    assert ("GET /items?project startAt=10000", 1) not in grown


def test_targets_report_the_measured_figure_and_the_verdict() -> None:
    judged = {t["target"]: t for t in targets(_rows(), (2_000, 20_000))}
    ratio = judged["GET /items/{id} c32, x bare (>= 0.6)"]
    assert ratio["measured"] == 280 / 900
    assert not ratio["met"]
    # Closed-loop p99 at c32 is queueing by construction: reported, not judged.
    closed = judged["worst read p99 ms at c32, closed loop (reported)"]
    assert (closed["measured"], closed["met"]) == (20.0, None)
    assert judged["worst write p99 ms at c32, closed loop (reported)"]["measured"] == 80.0
    deep = judged["startAt=10000 cost / first page, c1 (<= 2)"]
    assert deep["measured"] == 200 / 50
    assert not deep["met"]
    assert judged["startAt=10000 cost / first page, c32 (<= 2)"]["met"]
    basic = judged["Basic cost over Bearer, c1 (< 10%)"]
    assert round(basic["measured"], 6) == 5.0
    assert basic["met"]
    assert not judged["worst read growth 2000 -> 20000, vs bare (<= 1.2)"]["met"]


def test_a_single_size_run_has_no_growth_target() -> None:
    rows = [r for r in _rows() if r["size"] == 2_000]
    names = {t["target"] for t in targets(rows, (2_000,))}
    assert not any("growth" in n for n in names)
    assert "GET /items/{id} c32, x bare (>= 0.6)" in names


def _cpu(system_ms: float, other_ms: float = 5.0) -> list[dict[str, Any]]:
    """A CPU table whose system processes add up to ``system_ms`` per request, beside the
    driver's and the rest of the machine's (not the system's)."""
    return [
        {"process": "gateway", "cpu_s": 1.0, "cores": 0.4, "cpu_ms_per_request": system_ms / 2},
        {"process": "items", "cpu_s": 1.0, "cores": 0.4, "cpu_ms_per_request": system_ms / 2},
        {"process": "load driver (timed part)", "cores": 0.1, "cpu_ms_per_request": other_ms},
        {
            "process": "everything else on the machine",
            "cores": 0.3,
            "cpu_ms_per_request": other_ms,
        },
    ]


def _speed_rows() -> list[dict[str, Any]]:
    """The main item operations at 20,000 items, with their CPU and neighbouring bare."""
    rows = []
    for operation, rps, read, ms in (
        ("GET /items/{id}", 650, True, 0.8),
        ("GET /items?project first page", 300, True, 1.5),
        ("POST /items", 350, False, 2.5),
        ("PATCH /items/{id}", 200, False, 4.0),
    ):
        for c in (1, 32):
            row = _row(operation, 20_000, c, rps, 1000, read=read)
            row["cpu"] = _cpu(ms)
            for p in row["cpu"]:
                p["system"] = p["process"] in ("gateway", "items")
            rows.append(row)
    return rows


def _open(operation: str, read: bool, p99: float, p999: float) -> dict[str, Any]:
    return {
        "operation": operation,
        "read": read,
        "rate": 100.0,
        "rps": 100.0,
        "requests": 1500,
        "p50_ms": 2.0,
        "p99_ms": p99,
        "p999_ms": p999,
        "errors": 0,
        "extra_connections": 1,
        "max_late_ms": 0.5,
        "driver_cpu": 0.05,
    }


def test_main_operations_are_judged_against_the_bare_endpoint_at_each_concurrency() -> None:
    judged = {t["target"]: t for t in targets(_speed_rows(), (20_000,))}
    assert judged["GET /items/{id} c1, x bare (>= 0.6)"]["met"]
    assert judged["GET /items/{id} c32, x bare (>= 0.6)"]["measured"] == 0.65
    assert judged["POST /items c32, x bare (>= 0.3)"]["met"]
    patch = judged["PATCH /items/{id} c1, x bare (>= 0.3)"]
    assert (patch["measured"], patch["met"]) == (0.2, False)
    # The first page has no target against the bare endpoint.
    assert not [n for n in judged if n.startswith("GET /items?project first page c1, x bare")]


def test_cpu_per_request_adds_up_the_systems_processes_only() -> None:
    judged = {t["target"]: t for t in targets(_speed_rows(), (20_000,))}
    item = judged["GET /items/{id} c32, CPU ms/req, all processes (< 1)"]
    # The driver's and the rest of the machine's 5 ms each are not the system's.
    assert (item["measured"], item["met"]) == (0.8, True)
    assert not judged["GET /items?project first page c32, CPU ms/req, all processes (< 1)"]["met"]
    assert judged["POST /items c32, CPU ms/req, all processes (< 3)"]["met"]
    assert not judged["PATCH /items/{id} c32, CPU ms/req, all processes (< 3)"]["met"]
    assert not [n for n in judged if "c1, CPU" in n]


def test_open_loop_p99_limits_differ_for_reads_and_writes_and_p999_is_judged_too() -> None:
    runs = [
        _open("GET /items/{id}", True, 30.0, 90.0),
        _open("PUT /testruns/{id}", False, 30.0, 120.0),
    ]
    judged = {t["target"]: t for t in targets([], (), open_loop=runs)}
    assert not judged["GET /items/{id} open loop, p99 ms (< 25)"]["met"]
    assert judged["GET /items/{id} open loop, p99.9 ms (< 100)"]["met"]
    assert judged["PUT /testruns/{id} open loop, p99 ms (< 50)"]["met"]
    assert not judged["PUT /testruns/{id} open loop, p99.9 ms (< 100)"]["met"]


def test_a_missed_target_says_by_how_much_either_way() -> None:
    judged = {t["target"]: t for t in targets(_speed_rows(), (20_000,))}
    assert miss(judged["PATCH /items/{id} c1, x bare (>= 0.3)"]) == "by 0.10 (1.50x)"
    cpu = judged["PATCH /items/{id} c32, CPU ms/req, all processes (< 3)"]
    assert miss(cpu) == "by 1.00 (1.33x)"
    assert miss(judged["GET /items/{id} c1, x bare (>= 0.6)"]) == ""
    # A limit of zero or a negative figure has no factor, only the gap.
    negative = {"met": False, "measured": -5.0, "limit": 10.0, "higher_is_better": True}
    assert miss(negative) == "by 15.00"


def test_the_bench_wall_time_is_judged_only_for_a_whole_run_at_normal_size() -> None:
    def wall(timed: bool) -> dict[str, Any]:
        judged = targets([], (), bench_seconds=640.0, timed=timed)
        return next(t for t in judged if t["target"] == "bench wall time, s (< 600)")

    assert wall(True)["met"] is False
    assert wall(False)["met"] is None
    assert wall(False)["measured"] == 640.0


def test_the_report_prints_the_open_loop_and_cpu_tables_and_the_misses() -> None:
    runs = [_open("GET /items/{id}", True, 30.0, 90.0)]
    text = report(_speed_rows(), (20_000,), [], open_loop=runs)
    assert "open loop, half of c32" in text
    assert "p99.9 ms" in text
    assert "CPU ms per request, c32" in text
    cpu_lines = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line}
    # Columns: GET item, 1st page, POST item, PATCH item (no PUT without testmgmt).
    assert cpu_lines["gateway"] == ["0.40", "0.75", "1.25", "2.00"]
    total = next(line for line in text.splitlines() if line.startswith("all processes"))
    assert total.split()[-4:] == ["0.80", "1.50", "2.50", "4.00"]
    assert "load driver" not in text.split("CPU ms per request, c32")[1].split("target")[0]
    assert "GET /items/{id} open loop, p99 ms (< 25)" in text
    assert "NO, by 5.00 (1.20x)" in text
