"""The bench's growth table and target verdicts, from rows of known figures."""

from __future__ import annotations

from typing import Any

from bench.targets import growth, targets


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
    ratio = judged["GET /items/{id} c32, x bare (>= 0.5)"]
    assert ratio["measured"] == 280 / 900
    assert not ratio["met"]
    assert judged["worst read p99 ms at c32 (< 25)"]["met"]
    assert judged["worst read p99 ms at c32 (< 25)"]["measured"] == 20.0
    assert not judged["worst write p99 ms at c32 (< 50)"]["met"]
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
    assert "GET /items/{id} c32, x bare (>= 0.5)" in names
