"""The consumers' lag the bench watches during write rows."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from bench import lag
from tests.unit.bench.serving import serving


class _Consumers(BaseHTTPRequestHandler):
    """``/rest/labs/system/consumers`` of a system whose feed falls behind, then catches
    up: each answer is the next state, the last repeated."""

    states: list[list[dict[str, Any]]] = []
    asked: list[str] = []

    def do_GET(self) -> None:
        type(self).asked.append(self.headers.get("Authorization", ""))
        state = self.states[0] if len(self.states) == 1 else self.states.pop(0)
        body = json.dumps({"data": state}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _partition(consumer: str, n: int, events: int, seconds: float) -> dict[str, Any]:
    return {"consumer": consumer, "partition": n, "eventsBehind": events, "secondsBehind": seconds}


@pytest.fixture
def server() -> Iterator[str]:
    _Consumers.asked = []
    _Consumers.states = [
        [_partition("activity", 0, 5, 0.2), _partition("activity", 1, 7, 0.9)],
        [_partition("activity", 0, 40, 1.5), _partition("baselines", 0, 3, 0.1)],
        [_partition("activity", 0, 2, 0.3), _partition("baselines", 0, 0, 0.0)],
        [_partition("activity", 0, 0, 0.0), _partition("baselines", 0, 0, 0.0)],
    ]
    with serving(_Consumers) as url:
        yield url


def test_a_consumers_partitions_add_up_and_its_worst_partition_counts(server: str) -> None:
    assert lag.behind(server, "Basic x") == {"activity": (12, 0.9)}
    assert _Consumers.asked == ["Basic x"]


def test_a_write_row_keeps_the_most_each_consumer_fell_behind_and_the_catch_up(
    server: str,
) -> None:
    out: dict[str, Any] = {}
    with lag.watching(server, "Basic x", out):
        deadline = time.monotonic() + 10
        while len(_Consumers.asked) < 2 and time.monotonic() < deadline:  # the row: 2 looks
            time.sleep(0.01)
    seen = out["lag"]
    assert seen["consumers"]["activity"] == {"events": 40, "seconds": 1.5}
    assert seen["consumers"]["baselines"] == {"events": 3, "seconds": 0.1}
    assert seen["looks"] == 2
    assert seen["drained_s"] is not None  # the states after the row drain to nothing


def test_targets_judge_the_worst_seconds_behind_and_report_the_rest() -> None:
    rows = [
        {
            "operation": "POST /items",
            "concurrency": 32,
            "lag": {
                "consumers": {"activity": {"events": 900, "seconds": 2.5}},
                "drained_s": 4.0,
            },
        },
        {
            "operation": "PATCH /items/{id}",
            "concurrency": 32,
            "lag": {
                "consumers": {"activity": {"events": 10, "seconds": 0.4}},
                "drained_s": None,
            },
        },
        {"operation": "GET /items/{id}", "concurrency": 32},
    ]
    judged = {name: (measured, limit) for name, measured, limit, _ in lag.targets(rows)}
    assert judged["activity consumer: most seconds behind in the write rows"] == (2.5, 2.0)
    assert judged["activity consumer: most events behind in the write rows (reported)"] == (
        900,
        None,
    )
    # A row after which the consumers never caught up: no catch-up time to report.
    assert judged["consumers: seconds to catch up after a write row (reported)"] == (None, None)
    assert "POST /items" in lag.table(rows)
    assert lag.targets([{"operation": "GET /items/{id}", "concurrency": 1}]) == []
