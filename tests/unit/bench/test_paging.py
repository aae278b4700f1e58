"""The whole-project walk's figures and verdicts, the deep rows' sizes, and the growth
target at the largest size, from known figures; and one real walk over a local server
that pages as the contract does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from bench import paging
from bench.targets import targets
from tests.unit.bench.serving import serving


def test_the_ends_are_medians_of_the_first_and_last_pages() -> None:
    # 60 pages: the first 20 take 2 ms, the last 20 take 6 ms (one slow outlier each).
    times = [0.002] * 19 + [0.5] + [0.004] * 20 + [0.006] * 19 + [0.9]
    walked = paging.summary(times, read=3_000, total=3_000, seconds=1.0)
    assert walked["first_ms"] == pytest.approx(2.0)
    assert walked["last_ms"] == pytest.approx(6.0)
    assert walked["last_over_first"] == pytest.approx(3.0)
    assert walked["complete"]


def test_a_walk_that_missed_items_is_not_complete_and_fails_its_target() -> None:
    short = paging.summary([0.002, 0.002], read=99, total=100, seconds=0.1)
    judged = paging.targets([{"size": 2_000, **short}])
    once = next(t for t in judged if "every item once" in t[0])
    assert once[1:] == (0.0, 1.0, True)


def test_the_largest_size_is_judged() -> None:
    walks = [
        {"size": 2_000, **paging.summary([0.001] * 4, 200, 200, 0.1)},
        {"size": 20_000, **paging.summary([0.001] * 30 + [0.003] * 30, 3_000, 3_000, 1.0)},
    ]
    judged = {t["target"]: t for t in targets([], (), paging_walks=walks)}
    last = judged["paging 3,000 items, last page / first (<= 2)"]
    assert last["measured"] == pytest.approx(3.0)
    assert last["met"] is False
    assert judged["paging 3,000 items, every item once (1)"]["met"]
    assert "| 20,000 | 3,000 | 60 |" in paging.table(walks)


@pytest.mark.parametrize(
    ("path", "start"),
    [
        ("/rest/v1/items?project=3&startAt=500000", 500_000),
        ("/rest/v1/items?project=3&startAt=10000", 10_000),
        ("/rest/v1/items?project=3", 0),
    ],
)
def test_a_rows_deep_start_is_read_from_its_path(path: str, start: int) -> None:
    assert paging.deep_start(path) == start


def _growth_rows() -> list[dict[str, Any]]:
    rows = []
    for size, rps in ((2_000, 400.0), (20_000, 380.0), (1_000_000, 200.0)):
        rows.append(
            {
                "operation": "GET /items/{id}",
                "size": size,
                "concurrency": 1,
                "rps": rps,
                "ratio_to_bare": rps / 1000,
                "read": True,
                "p99_ms": 1.0,
            }
        )
    return rows


def test_growth_is_judged_to_20000_and_to_the_largest_size() -> None:
    judged = {t["target"]: t for t in targets(_growth_rows(), (2_000, 20_000, 1_000_000))}
    assert judged["worst read growth 2000 -> 20000, vs bare (<= 1.2)"]["met"]
    million = judged["worst read growth 2000 -> 1000000, vs bare (<= 1.2)"]
    assert million["measured"] == pytest.approx(2.0)
    assert million["met"] is False


class _Project(BaseHTTPRequestHandler):
    """``GET /rest/v1/items?project=`` over 123 items, as the gateway pages them."""

    ITEMS = 123

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        start, size = int(query["startAt"][0]), int(query["maxResults"][0])
        data = [{"id": 1_000 + n} for n in range(start, min(start + size, self.ITEMS))]
        body = json.dumps({"meta": {"pageInfo": {"totalResults": self.ITEMS}}, "data": data})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    with serving(_Project) as url:
        yield url


def test_a_walk_reads_every_page_until_total_results(server: str) -> None:
    walked = paging.walk(server, 7, "Basic x", page=50)
    assert (walked["pages"], walked["items"], walked["total"]) == (3, 123, 123)
    assert walked["complete"]
