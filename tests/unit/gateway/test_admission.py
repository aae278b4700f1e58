"""Adaptive admission, driven by a fake clock and made-up handling times: the limit
follows latency, the queue stays short in time, refusals are immediate and say when to
come back from the measured drain rate; then a flood through the ASGI app."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from plumbline.gateway import middleware
from plumbline.gateway.admission import FLOOR, Admission, DrainRate, GradientLimit
from plumbline.gateway.middleware import GatewayMiddleware
from tests.unit.gateway.apps import app_with


class FakeClock:
    """Monotonic seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _busy(limit: GradientLimit, seconds: float, samples: int) -> None:
    """``samples`` requests of ``seconds`` each, with the limit fully used."""
    for _ in range(samples):
        limit.sample(seconds, int(limit))


def test_the_limit_grows_while_latency_holds() -> None:
    limit = GradientLimit(maximum=200, initial=10)
    _busy(limit, 0.005, 50)
    assert int(limit) > 30
    _busy(limit, 0.005, 500)
    assert int(limit) == 200


def test_the_limit_shrinks_when_latency_rises() -> None:
    limit = GradientLimit(maximum=200, initial=100)
    _busy(limit, 0.005, 600)  # the long-run average: 5 ms
    high = int(limit)
    _busy(limit, 0.050, 40)  # ten times slower
    assert int(limit) < high / 4
    # Latency that stays high becomes the long-run average: the limit grows again,
    # slowly, until it is what keeps latency within the tolerance of that average.
    _busy(limit, 0.050, 200)
    assert int(limit) < high / 2


def test_latency_over_the_target_keeps_the_limit_down_however_long_it_lasts() -> None:
    """A flood that lasts makes its latency the long-run average; the target still holds
    the limit down, where the average alone would let it climb to the ceiling."""
    limit = GradientLimit(maximum=200, target=0.1, initial=100)
    _busy(limit, 0.3, 5000)
    assert int(limit) <= 5
    drifting = GradientLimit(maximum=200, target=10.0, initial=100)
    _busy(drifting, 0.3, 5000)
    assert int(drifting) == 200


def test_the_limit_stays_within_its_bounds() -> None:
    limit = GradientLimit(maximum=8, minimum=6, initial=50)
    assert int(limit) == 8
    _busy(limit, 0.001, 600)
    assert int(limit) == 8
    _busy(limit, 1.0, 100)
    assert int(limit) == 6
    assert int(GradientLimit(maximum=1)) == 1  # a one-slot throttle stays one


def test_an_unused_limit_does_not_grow() -> None:
    """Requests that never fill half the limit say nothing about what more would do."""
    limit = GradientLimit(maximum=200, initial=20)
    for _ in range(500):
        limit.sample(0.005, 3)
    assert int(limit) == 20


def test_the_drain_rate_is_measured_over_busy_time() -> None:
    clock = FakeClock()
    drain = DrainRate(clock, window=0.5)
    assert drain.per_second() == 1.0  # nothing measured yet
    for _ in range(200):  # 200 a second for a second
        clock.advance(0.005)
        drain.completed()
    assert 190 < drain.per_second() < 210
    clock.advance(60)  # idle: no drain, and no change in what the server can do
    assert 190 < drain.per_second() < 210
    for _ in range(5):  # a request now and then is no measure of the drain
        clock.advance(10)
        drain.completed()
    assert 190 < drain.per_second() < 210
    for _ in range(200):  # then 50 a second
        clock.advance(0.02)
        drain.completed()
    assert 45 < drain.per_second() < 80


def _admission(clock: FakeClock, limit: int = 2, queue: int = 100) -> Admission:
    """An admission of ``limit`` in flight (under ``FLOOR``, the limit stays there) that
    has seen 100 requests a second complete."""
    admission = Admission(limit, queue, timeout=10, clock=clock)
    assert int(admission.limit) == limit
    for _ in range(100):  # 100 requests a second complete: the queue may hold 10
        clock.advance(0.01)
        admission.drain.completed()
    return admission


async def test_requests_beyond_the_queue_bound_are_refused_at_once() -> None:
    clock = FakeClock()
    admission = _admission(clock)
    assert admission.depth() == 10  # what drains within the 0.1 s queue delay
    assert await admission.acquire()
    assert await admission.acquire()
    waiters = [asyncio.create_task(admission.acquire()) for _ in range(10)]
    await asyncio.sleep(0)
    assert admission.waiting == 10
    assert admission.full()
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert not await admission.acquire()
    assert loop.time() - started < 0.01
    for _ in range(12):
        admission.release(0.01)
    assert all(await asyncio.gather(*waiters))
    assert (admission.in_flight, admission.waiting) == (0, 0)


async def test_a_standing_queue_refuses_newcomers() -> None:
    """CoDel's signal: once the oldest waiter has waited longer than the queue delay, the
    queue is not draining as measured, and newcomers are refused however short it is."""
    clock = FakeClock()
    admission = _admission(clock)
    assert await admission.acquire()
    assert await admission.acquire()
    waiter = asyncio.create_task(admission.acquire())
    await asyncio.sleep(0)
    assert not admission.full()
    clock.advance(0.2)
    assert admission.full()
    assert not await admission.acquire()
    admission.release(0.2)
    assert await waiter
    assert not admission.full() or admission.in_flight == 2


async def test_a_waiter_is_refused_at_the_wait_limit() -> None:
    admission = Admission(1, queue=5, timeout=0.05)
    assert await admission.acquire()
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert not await admission.acquire()
    assert 0.04 < loop.time() - started < 0.5
    assert admission.waiting == 0
    # A request held already for the whole limit is refused without waiting.
    assert not await admission.acquire(waited=0.05)
    admission.release(0.01)
    assert admission.in_flight == 0


async def test_a_cancelled_waiter_gives_its_place_on() -> None:
    clock = FakeClock()
    admission = _admission(clock, limit=1)
    assert await admission.acquire()
    first = asyncio.create_task(admission.acquire())
    second = asyncio.create_task(admission.acquire())
    await asyncio.sleep(0)
    admission.release(0.01)  # the slot goes to the first waiter...
    first.cancel()  # ...whose client has just gone
    assert await second
    assert admission.in_flight == 1
    admission.release(0.01)
    assert (admission.in_flight, admission.waiting) == (0, 0)


async def test_retry_after_follows_the_drain_rate() -> None:
    """Each refused client is given the next place at the measured rate: with 100 a
    second, the first hundred refused come back after a second, the next after two."""
    clock = FakeClock()
    admission = _admission(clock)
    told = [admission.retry_after() for _ in range(300)]
    assert set(told[:95]) == {1}
    assert set(told[105:195]) == {2}
    assert set(told[205:295]) == {3}
    slower = _admission(FakeClock())
    for _ in range(100):  # now 10 a second
        slower.clock.advance(0.1)  # type: ignore[attr-defined]
        slower.drain.completed()
    assert slower.drain.per_second() < 40
    assert slower.retry_after() < max(slower.retry_after() for _ in range(100))


async def test_retry_after_is_never_longer_than_the_wait_limit() -> None:
    clock = FakeClock()
    admission = _admission(clock)
    assert {admission.retry_after() for _ in range(5000)} <= set(range(1, 11))
    assert admission.retry_after() == 10
    clock.advance(30)  # the clients told went and came back: the schedule is free again
    assert admission.retry_after() == 1
    assert Admission(2, queue=5, timeout=0.5).retry_after() == 1


def _flooded_app(admission: Admission) -> tuple[FastAPI, list[int]]:
    """An app behind the front door whose one route takes 10 ms, and the most requests
    it ever had running at once (one item, updated)."""
    app = app_with()
    running = [0]
    most = [0]

    @app.get("/rest/v1/work")
    async def work() -> dict[str, str]:
        running[0] += 1
        most[0] = max(most[0], running[0])
        await asyncio.sleep(0.01)
        running[0] -= 1
        return {"ok": "yes"}

    app.add_middleware(GatewayMiddleware, admission=admission, max_body=1024)
    return app, most


async def test_a_flood_gets_quick_429s_while_admitted_requests_succeed() -> None:
    """100 connections that never back off, through the ASGI app: the admitted keep
    succeeding, quickly; the rest get an immediate 429 with a Retry-After within the
    wait limit; no more run at once than the limit allows."""
    admission = Admission(8, queue=100, timeout=2, queue_delay=0.05)
    app, most = _flooded_app(admission)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 1.5

    async def connection(port: int) -> list[tuple[int, float, str | None, bool]]:
        """(status, seconds, Retry-After, sent while told to wait) of each request."""
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", port))
        answers = []
        told = False
        headers = {"Authorization": "Basic dGVzdDp0ZXN0"}
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            while loop.time() < deadline:
                started = loop.time()
                response = await client.get("/rest/v1/work", headers=headers)
                retry = response.headers.get("retry-after")
                answers.append((response.status_code, loop.time() - started, retry, told))
                told = response.status_code == 429
        return answers

    batches = await asyncio.gather(*(connection(40_000 + n) for n in range(100)))
    answers = [a for batch in batches for a in batch]
    statuses = [status for status, _, _, _ in answers]
    assert set(statuses) == {200, 429}
    assert statuses.count(200) >= 200
    assert most[0] <= 8
    refused = [a for a in answers if a[0] == 429]
    assert all(retry is not None and 1 <= int(retry) <= 2 for _, _, retry, _ in refused)
    # Wall-clock figures here are judged against each other and against the wait limit,
    # never against a machine's speed (CI shares two cores with everything else): a
    # refusal the client did not earn a hold for is answered without waiting for a place,
    # so sooner than an admitted request, which waits for one and then works for 10 ms.
    fresh = sorted(seconds for _, seconds, _, told in refused if not told)
    admitted = sorted(seconds for status, seconds, _, told in answers if status == 200 and not told)
    assert fresh
    assert admitted
    assert fresh[len(fresh) // 2] < admitted[len(admitted) // 2]
    # The queue keeps its delay short: an admitted request is not one that sat out most
    # of the wait limit.
    assert admitted[int(0.99 * len(admitted))] < admission.timeout / 2
    # Nothing waits much longer than the wait limit, a hold included.
    assert max(seconds for _, seconds, _, _ in answers) < admission.timeout + 1
    assert (admission.in_flight, admission.waiting) == (0, 0)


def test_slow_handling_never_takes_the_limit_below_an_ordinary_load() -> None:
    """Writes that take 0.4 s each on a slow machine shrink the limit, but never below
    ``FLOOR``: 32 writers at once are not refused."""
    admission = Admission(64, queue=512, timeout=10, clock=FakeClock())
    for _ in range(2000):
        admission.in_flight = int(admission.limit)  # every place taken
        admission.limit.sample(0.4, admission.in_flight)
    assert int(admission.limit) == FLOOR
    small = Admission(8, queue=16, timeout=10)
    assert small.limit.minimum == 8  # a ceiling under the floor is both


async def test_the_connections_told_to_wait_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound, the connections told to come back later are forgotten (they are
    then only not held) rather than scanned again on every refusal."""
    monkeypatch.setattr(middleware, "_MAX_TOLD", 4)
    door = GatewayMiddleware(app_with(), admission=Admission(1, queue=0, timeout=10), max_body=1)
    statuses: list[int] = []

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    for port in range(1, 11):
        scope = {"type": "http", "client": ("127.0.0.1", port), "method": "GET", "headers": []}
        await door._throttled(scope, receive, send, close=False)
        assert 1 <= len(door._told) <= 4
    assert statuses == [429] * 10
    assert ("127.0.0.1", 10) in door._told  # the latest is always kept
