"""The history rows' pure parts: interleaved runs, combined rows, targets and the table."""

from __future__ import annotations

from typing import Any

from bench import history as hist
from bench.report import report
from bench.targets import targets


def _run(rps: float, requests: int = 100, **figures: Any) -> dict[str, Any]:
    return {
        "requests": requests,
        "rps": rps,
        "p50_ms": 2.0,
        "p99_ms": 9.0,
        "errors": 0,
        "error_kinds": {},
        "driver_cpu": 0.1,
        **figures,
    }


def test_a_combined_row_is_its_requests_over_the_runs_summed_wall_time() -> None:
    first = _run(100.0, p50_ms=2.0, p99_ms=9.0, driver_cpu=0.1)
    second = _run(50.0, p50_ms=4.0, p99_ms=20.0, errors=2, error_kinds={"409": 2}, driver_cpu=0.4)
    row = hist.combine([first, second])
    # 100 requests in 1 s, then 100 in 2 s.
    assert row["requests"] == 200
    assert row["rps"] == 200 / 3
    assert row["p50_ms"] == 3.0
    assert row["p99_ms"] == 20.0
    assert row["errors"] == 2
    assert row["error_kinds"] == {"409": 2}
    assert row["driver_cpu"] == (0.1 * 1 + 0.4 * 2) / 3


def test_runs_without_throughput_combine_to_zero() -> None:
    row = hist.combine([_run(0.0, requests=0), _run(0.0, requests=0)])
    assert row["rps"] == 0.0
    assert row["driver_cpu"] == 0.0


def test_interleaved_runs_go_a_b_b_a_with_half_the_requests_each() -> None:
    calls: list[tuple[str, int]] = []

    def recorder(name: str, rps: float) -> hist.Run:
        def run(requests: int) -> dict[str, Any]:
            calls.append((name, requests))
            return _run(rps, requests)

        return run

    a, b = hist.interleaved(recorder("a", 100.0), recorder("b", 200.0), 301)
    assert calls == [("a", 150), ("b", 150), ("b", 151), ("a", 151)]
    assert a["requests"] == b["requests"] == 301
    assert a["rps"] == 100.0
    assert b["rps"] == 200.0


def _figures(**overrides: Any) -> dict[str, Any]:
    def row(operation: str, c: int, rps: float) -> dict[str, Any]:
        return {"operation": operation, "concurrency": c, **_run(rps)}

    history: dict[str, Any] = {
        "items": 20_000,
        "rows": [
            row(hist.ITEM_ROW, 32, 300.0),
            row(hist.VERSIONS_ROW, 32, 250.0),
            row(hist.OLD_ROW, 1, 90.0),
            row(hist.NEW_ROW, 1, 100.0),
            row(hist.OLD_ROW, 4, 80.0),
            row(hist.NEW_ROW, 4, 120.0),
        ],
        "baseline_samples": [3.0, 6.0, 4.0, 5.0],
        "baseline_median_s": 4.5,
        "compare_baseline_samples": [0.4, 0.5, 0.3],
        "compare_baseline_median_s": 0.4,
        "compare_baseline_changes": 200,
        "baseline_items": 20_000,
        "compare_current_samples": [1.3, 1.1, 1.2],
        "compare_current_median_s": 1.2,
        "versions_s": 9.5,
        "old_versions": 1_400,
    }
    history.update(overrides)
    return history


def test_targets_judge_reads_baselines_compare_and_write_growth() -> None:
    found = {
        name: (measured, limit, higher)
        for name, measured, limit, higher in hist.targets(_figures())
    }
    assert found["versions c32, x GET /items/{id} c32 (>= 0.8)"] == (250 / 300, 0.8, True)
    assert found["baseline of 20000 items, median s (< 5)"] == (4.5, 5.0, False)
    assert found["compare to a baseline, page 1, median s (< 1)"] == (0.4, 1.0, False)
    assert found["compare to current, page 1, median s (< 1)"] == (1.2, 1.0, False)
    # Cost is 1 / throughput: the old item's PATCH over the new one's.
    assert found["PATCH cost, 1000 versions / new item, c1 (<= 1.2)"] == (100 / 90, 1.2, False)
    assert found["PATCH cost, 1000 versions / new item, c4 (<= 1.2)"] == (120 / 80, 1.2, False)


def test_the_bench_targets_take_the_history_ones_with_verdicts() -> None:
    verdicts = {t["target"]: t["met"] for t in targets([], (), [], history=_figures())}
    assert verdicts == {
        "versions c32, x GET /items/{id} c32 (>= 0.8)": True,
        "baseline of 20000 items, median s (< 5)": True,
        "compare to a baseline, page 1, median s (< 1)": True,
        "compare to current, page 1, median s (< 1)": False,
        "PATCH cost, 1000 versions / new item, c1 (<= 1.2)": True,
        "PATCH cost, 1000 versions / new item, c4 (<= 1.2)": False,
    }
    assert "PATCH cost, 1000 versions / new item, c4 (<= 1.2)" in report(
        [], (), [], history=_figures()
    )


def test_missing_figures_give_no_target_and_the_table_still_prints() -> None:
    history = {"items": 2_000, "rows": []}
    assert targets([], (), [], history=history) == []
    assert hist.VERSIONS_ROW not in hist.report(history)
    text = hist.report(_figures())
    assert f"{hist.VERSIONS_ROW:42}  32      250" in text
    assert "baseline of 20000 items: median 4.50 s (3.00, 6.00, 4.00, 5.00)" in text
    assert "compare to current, 1% changed, first page: median 1.20 s" in text
    assert "had 1400 at the end" in text
    assert "first page: median 0.40 s (0.40, 0.50, 0.30); 200 changes in all" in text
    assert "the baseline after the changes holds 20000 items" in text
