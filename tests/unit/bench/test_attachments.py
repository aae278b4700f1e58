"""The bench's attachment rows: files, copies, memory samples, targets and the table."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from bench import attachments as att
from bench.targets import targets

MIB = att.MIB


def _transfer(operation: str, label: str, c: int, mb: float, cp: float, rss: int) -> dict[str, Any]:
    size = att.FILES[label][0]
    return {
        "operation": operation,
        "file": label,
        "bytes": size,
        "concurrency": c,
        "rounds": 3,
        "round_s": [1.0, 1.0, 1.0],
        "round_s_median": 1.0,
        "mb_per_s": mb,
        "mb_per_s_min": mb,
        "mb_per_s_max": mb,
        "driver_cpu": 0.1,
        "cp_mb_per_s": cp,
        "ratio_to_cp": mb / cp,
        "rss": {"gateway": {"before": 100 * MIB, "peak": 100 * MIB + rss, "growth": rss}},
        "rss_growth": rss,
        "server_cpu": {"gateway": 0.9},
    }


def _figures() -> dict[str, Any]:
    rows = []
    for c, cp in ((1, 3000.0), (8, 2000.0)):
        rows += [
            _transfer("PUT /attachments/{id}/file", "100 MiB", c, 1600.0, cp, 50 * MIB),
            _transfer("GET /attachments/{id}/file", "100 MiB", c, 150.0, cp, 300 * MIB),
        ]
    copy = att._row("cp (same disk)", "100 MiB", 100 * MIB, 8, [0.5, 0.4, 0.6], 0.0)
    return {"rows": [copy, *rows], "max_upload_bytes": 2**30, "processes": ["gateway"]}


def test_a_row_is_the_median_of_its_rounds_in_megabytes_a_second() -> None:
    row = att._row("cp (same disk)", "1 MiB", MIB, 8, [0.5, 0.25, 1.0], 0.35)
    assert row["mb_per_s"] == 8 * MIB / 0.5 / 1e6
    assert row["mb_per_s_min"] == 8 * MIB / 1.0 / 1e6
    assert row["mb_per_s_max"] == 8 * MIB / 0.25 / 1e6
    assert row["driver_cpu"] == 0.35 / 1.75


def test_targets_judge_the_large_file_against_cp_and_memory_against_bytes_in_flight() -> None:
    found = {
        name: (measured, limit, higher) for name, measured, limit, higher in att.targets(_figures())
    }
    assert found["upload 100 MiB c1, x cp (>= 0.5)"] == (1600 / 3000, 0.5, True)
    assert found["download 100 MiB c8, x cp (>= 0.5)"] == (150 / 2000, 0.5, True)
    assert found["upload 100 MiB c8, RSS growth MiB (< 200)"] == (50.0, 200.0, False)
    verdicts = {t["target"]: t["met"] for t in targets([], (), [], None, _figures())}
    assert verdicts["upload 100 MiB c1, x cp (>= 0.5)"] is True
    assert verdicts["download 100 MiB c1, x cp (>= 0.5)"] is False
    assert verdicts["upload 100 MiB c8, RSS growth MiB (< 200)"] is True
    assert verdicts["download 100 MiB c8, RSS growth MiB (< 200)"] is False


def test_missing_rows_give_no_target_and_the_table_still_prints() -> None:
    empty = {"rows": [], "max_upload_bytes": 2**30, "processes": []}
    assert targets([], (), [], None, empty) == []
    text = att.report(_figures())
    assert "cp (same disk)" in text
    assert "RSS during PUT" in text
    assert "x cp" in att.report(empty)


def test_random_files_and_copies_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    digest = att.random_file(path, 5 * MIB + 3)
    assert path.stat().st_size == 5 * MIB + 3
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    row = att.copy_rounds(path, "5 MiB", 5 * MIB + 3, 2, 2)
    assert row["rounds"] == 2
    assert row["mb_per_s"] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin"]


def test_peak_rss_sees_memory_taken_while_it_samples() -> None:
    assert (att.rss_bytes(os.getpid()) or 0) > 0
    assert att.rss_bytes(2**22 + 12345) is None
    with att.PeakRss({os.getpid(): "me"}) as memory:
        held = bytearray(64 * MIB)
        held[::4096] = b"x" * len(held[::4096])
    del held
    growth = memory.growth()["me"]
    assert growth["growth"] >= 32 * MIB
    assert growth["peak"] - growth["before"] == growth["growth"]
