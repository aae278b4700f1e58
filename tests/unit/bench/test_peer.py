"""The comparison with Kiwi TCMS: its anchor's JSON read, Plumbline's equivalent rows
beside it, the ratios and their targets.

``fixtures/kiwi-result.json`` is ``../shared/anchors/kiwi/example-result.json`` (Kiwi
12.4 on this machine, 2026-11-23 18:48): read 57.7 / 147.0, list50 39.1 / 93.2, update
22.4 / 34.7, create 31.7 / 73.8 req/s at c1 / c32.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import peer
from bench.targets import targets
from bench.testmgmt import PUT

KIWI = Path(__file__).parent / "fixtures" / "kiwi-result.json"


def _row(operation: str, c: int, rps: float) -> dict[str, Any]:
    return {
        "operation": operation,
        "size": 20_000,
        "concurrency": c,
        "rps": rps,
        "p50_ms": 2.0,
        "p99_ms": 9.0,
        "errors": 0,
        "driver_cpu": 0.1,
        "cpu": [
            {"process": "plumbline (all services)", "cpu_ms_per_request": 1.5, "system": True},
            {"process": "load driver (timed part)", "cpu_ms_per_request": 0.2, "system": False},
        ],
    }


def _plumbline() -> list[dict[str, Any]]:
    """Closed-loop rows of the main operations at c1 and c32 (no first page at c1)."""
    return [
        _row("GET /items/{id}", 1, 173.1),
        _row("GET /items/{id}", 32, 441.0),
        _row("GET /items?project first page", 32, 279.6),
        _row("POST /items", 1, 40.0),
        _row("POST /items", 32, 73.8),
        _row("PATCH /items/{id}", 1, 44.8),
        _row("PATCH /items/{id}", 32, 173.5),
        _row(PUT, 1, 33.6),
        _row(PUT, 32, 104.1),
    ]


def _by(compared: list[dict[str, Any]], operation: str, c: int) -> dict[str, Any]:
    return next(r for r in compared if r["operation"] == operation and r["concurrency"] == c)


def _line(text: str, row: str, c: int) -> str:
    """The table's line of ``row`` at concurrency ``c``."""
    return next(
        line
        for line in text.splitlines()
        if line.startswith(row) and line[len(row) :].split()[0] == str(c)
    )


def test_kiwis_result_is_read_with_its_run_and_every_row() -> None:
    kiwi = peer.read_kiwi(KIWI)
    assert kiwi["started"] == "2026-11-23T18:48:34+00:00"
    assert kiwi["busy_pct_before"] == 2
    assert kiwi["nproc"] == 2
    assert len(kiwi["results"]) == 10
    assert {(r["op"], r["c"]) for r in kiwi["results"]} >= {("read", 1), ("update", 32)}


def test_each_main_operation_is_compared_with_its_kiwi_equivalent() -> None:
    compared = peer.compare(_plumbline(), peer.read_kiwi(KIWI))
    assert len(compared) == 10  # five pairs at c1 and c32
    item = _by(compared, "GET /items/{id}", 32)
    assert (item["kiwi_op"], item["kiwi_rps"]) == ("read", 147.0)
    assert item["ratio"] == pytest.approx(3.0)
    assert item["limit"] == 3.0
    assert _by(compared, "GET /items?project first page", 32)["ratio"] == pytest.approx(3.0)
    assert _by(compared, "POST /items", 32)["ratio"] == pytest.approx(1.0)
    # The item PATCH and the test run PUT both face Kiwi's execution update, at 5x.
    patch = _by(compared, "PATCH /items/{id}", 32)
    assert (patch["kiwi_op"], patch["limit"]) == ("update", 5.0)
    assert patch["ratio"] == pytest.approx(5.0)
    assert _by(compared, PUT, 32)["ratio"] == pytest.approx(3.0)
    # At c1 every row asks 1.5x.
    assert {r["limit"] for r in compared if r["concurrency"] == 1} == {1.5}
    assert _by(compared, "GET /items/{id}", 1)["ratio"] == pytest.approx(3.0)
    assert _by(compared, PUT, 1)["ratio"] == pytest.approx(1.5)
    # CPU per request: Kiwi's gunicorn and PostgreSQL; ours the system's processes only.
    assert item["kiwi_cpu_ms"] == pytest.approx(8.44 + 4.59)
    assert item["cpu_ms"] == 1.5
    # A row this run did not measure compares nothing.
    page = _by(compared, "GET /items?project first page", 1)
    assert (page["rps"], page["ratio"], page["kiwi_rps"]) == (None, None, 39.1)


def test_the_ratios_are_targets_with_verdicts_and_missing_rows_none() -> None:
    compared = peer.compare(_plumbline(), peer.read_kiwi(KIWI))
    judged = {t["target"]: t for t in targets([], (), peer=peer.targets(compared))}
    assert judged["GET /items/{id} c32 / Kiwi read (>= 3.0)"]["met"]
    assert judged["PATCH /items/{id} c32 / Kiwi update (>= 5.0)"]["met"]
    assert not judged["POST /items c32 / Kiwi create (>= 3.0)"]["met"]
    assert not judged[f"{PUT} c32 / Kiwi update (>= 5.0)"]["met"]
    assert judged[f"{PUT} c1 / Kiwi update (>= 1.5)"]["met"]
    assert "GET /items?project first page c1 / Kiwi list50 (>= 1.5)" not in judged


def test_the_table_puts_both_side_by_side_with_the_ratio_and_the_miss() -> None:
    kiwi = peer.read_kiwi(KIWI)
    text = peer.table(peer.compare(_plumbline(), kiwi), kiwi, "embedded")
    assert "2026-11-23T18:48:34+00:00 (2% busy before it measured)" in text
    create = _line(text, "create", 32)
    assert create.split()[1:7] == ["32", "74", "74", "1.00", "3.0", "NO"]
    assert create.endswith("by 2.00 (3.00x)")
    put = _line(text, "test-run result (Kiwi: execution)", 1)
    assert put.split()[4:10] == ["1", "22", "34", "1.50", "1.5", "yes"]
    assert put.endswith("1.50")
    page = _line(text, "first page (20 items; Kiwi 50)", 1)
    assert page.split()[6:12] == ["1", "39", "-", "-", "1.5", "-"]


def test_a_file_that_is_not_kiwis_result_says_what_is_missing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rows": []}))
    with pytest.raises(ValueError, match="no `results` list"):
        peer.read_kiwi(bad)
    bad.write_text(json.dumps({"results": [{"op": "read", "c": 1}]}))
    with pytest.raises(ValueError, match=r"results\[0\] lacks rps, p50_ms, p99_ms"):
        peer.read_kiwi(bad)
    bad.write_text("{")
    with pytest.raises(ValueError, match="is not JSON"):
        peer.read_kiwi(bad)


def test_a_saved_run_is_compared_again_from_its_file(tmp_path: Path) -> None:
    saved = tmp_path / "20261126T040000Z-distributed.json"
    put_rows = [r for r in _plumbline() if r["operation"] == PUT]
    item_rows = [r for r in _plumbline() if r["operation"] != PUT]
    # A smaller size's rows are not the comparison's.
    early = {**_row("GET /items/{id}", 32, 1.0), "size": 2_000}
    saved.write_text(
        json.dumps(
            {
                "topology": "distributed",
                "size": "normal",
                "rows": [early, *item_rows],
                "testmgmt": {"rows": put_rows},
            }
        )
    )
    text = peer.reprint([saved], KIWI)
    assert "distributed (size normal, 20261126T040000Z-distributed.json)" in text
    item = _line(text, "read one record", 1)
    assert item.split()[3:9] == ["1", "58", "173", "3.00", "1.5", "yes"]


def test_kiwis_anchor_is_run_with_out_naming_where_its_json_goes(tmp_path: Path) -> None:
    """A stand-in for run.sh that writes the example result where ``OUT`` says."""
    script = tmp_path / "run.sh"
    script.write_text(f'cp "{KIWI}" "$OUT"\n')
    out = tmp_path / "kiwi.json"
    assert peer.run_kiwi(out, script) == out
    assert peer.read_kiwi(out)["started"] == "2026-11-23T18:48:34+00:00"
    with pytest.raises(FileNotFoundError, match="KIWI_RESULT"):
        peer.run_kiwi(out, tmp_path / "missing.sh")
