"""The test management rows' pure parts: the JUnit report, the targets, the table."""

from __future__ import annotations

from typing import Any

from bench.drive import median_seconds
from bench.report import report as bench_report
from bench.targets import targets as bench_targets
from bench.testmgmt import PUT, junit_report, report, targets
from plumbline.services.testmgmt import junit


def test_the_report_names_half_the_cases_by_property_and_half_by_name() -> None:
    cases = [(100 + n, f"Case {n}") for n in range(40)]
    xml, statuses = junit_report(cases)
    parsed = junit.parse(xml)
    assert statuses == {"PASSED": 30, "FAILED": 6, "NOT_RUN": 4}
    assert len(parsed) == 40
    by_name = {c.name: c for c in parsed}
    assert junit.named_references(by_name["test_0"]) == [("testcase", "100")]
    assert not junit.named_references(by_name["Case 1"])
    assert [by_name[n].status for n in ("Case 1", "Case 3", "test_6", "Case 17", "test_8")] == [
        "PASSED",
        "FAILED",
        "FAILED",
        "NOT_RUN",
        "NOT_RUN",
    ]


FIGURES = {"p50_ms": 5.0, "p99_ms": 9.0, "errors": 0, "driver_cpu": 0.02}


def _tm(**overrides: Any) -> dict[str, Any]:
    tm: dict[str, Any] = {
        "generated": 500,
        "ingest_cases": 10_000,
        "rows": [
            {"operation": PUT, "size": 500, "concurrency": 1, "rps": 100.0, **FIGURES},
            {"operation": PUT, "size": 500, "concurrency": 32, "rps": 160.0, **FIGURES},
        ],
        "cycle_median_s": 0.4,
        "cycle_samples": [0.4, 0.3, 0.5],
        "big_cycle_s": 6.0,
        "ingest": {"seconds": 7.5, "via": "REST", "matched": 10_000, "unmatched": 0, "bytes": 1},
        "paced": {
            "rps": 80.0,
            "rate": 80.0,
            "p50_ms": 9.0,
            "p99_ms": 40.0,
            "errors": 0,
            "error_kinds": {},
            "driver_cpu": 0.01,
            "extra_connections": 0,
            "max_late_ms": 1.0,
        },
    }
    tm.update(overrides)
    return tm


def test_targets_judge_generation_and_ingest_and_report_put() -> None:
    found = {t[0]: t for t in targets(_tm())}
    assert found[f"{PUT} c32, req/s (reported)"] == (
        f"{PUT} c32, req/s (reported)",
        160.0,
        None,
        True,
    )
    assert found["cycle generation of 500 runs, median s (< 1)"][1:] == (0.4, 1.0, False)
    assert found["JUnit ingest of 10000 cases, s (< 5)"][1:] == (7.5, 5.0, False)


def test_the_bench_targets_take_the_test_management_ones_with_verdicts() -> None:
    verdicts = {t["target"]: t["met"] for t in bench_targets([], (), [], _tm())}
    assert verdicts == {
        f"{PUT} c32, req/s (reported)": None,
        "cycle generation of 500 runs, median s (< 1)": True,
        "JUnit ingest of 10000 cases, s (< 5)": False,
    }
    text = bench_report([], (), [], _tm())
    assert "JUnit ingest of 10000 cases, s (< 5)" in text
    assert "NO" in text


def test_missing_figures_give_no_target_and_the_table_still_prints() -> None:
    tm = _tm(rows=[], paced=None, ingest=None)
    del tm["cycle_median_s"]
    assert bench_targets([], (), [], tm) == []
    assert "test management" in report(tm)
    assert "cycle generation, 500 runs: median 0.40 s" in report(_tm())


def test_the_median_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    assert median_seconds([0.3, 0.1, 0.4, 0.2]) == 0.25
    assert median_seconds([]) == 0.0
