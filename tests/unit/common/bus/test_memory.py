"""The in-process bus: cursors over one ordered log."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from plumbline.common.bus._memory import MemoryBus
from plumbline.common.events import Event
from plumbline.common.leases import LeaseLost
from tests.unit.common.conftest import eventually


@pytest.fixture
async def bus() -> AsyncIterator[MemoryBus]:
    bus = MemoryBus("t")
    await bus.connect()
    try:
        yield bus
    finally:
        await bus.close()


class Recorder:
    """A handler that remembers what it got."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def __call__(self, event: Event) -> None:
        self.events.append(event)

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.events]


async def test_a_durable_subscriber_sees_earlier_events(bus: MemoryBus) -> None:
    first = Event("items.project.created", actor=1)
    second = Event("items.project.updated", actor=1)
    await bus.publish(first)
    await bus.publish(second)
    recorder = Recorder()
    await bus.subscribe("t.>", recorder, durable="feed")
    await eventually(lambda: len(recorder.events) == 2)
    assert recorder.ids == [first.id, second.id]
    assert recorder.events[0] == first  # the event itself, not a copy with changes


async def test_a_plain_subscriber_sees_only_new_events(bus: MemoryBus) -> None:
    old = Event("items.project.created", actor=1)
    await bus.publish(old)
    fresh = Recorder()
    witness = Recorder()
    await bus.subscribe("t.>", fresh)
    await bus.subscribe("t.>", witness, durable="witness")
    new = Event("items.project.updated", actor=1)
    await bus.publish(new)
    await eventually(lambda: len(witness.events) == 2)
    await eventually(lambda: len(fresh.events) == 1)
    assert fresh.ids == [new.id]


async def test_a_second_publish_of_the_same_event_is_dropped(bus: MemoryBus) -> None:
    event = Event("items.project.created", actor=1)
    other = Event("items.project.deleted", actor=1)
    await bus.publish(event)
    await bus.publish(event)
    await bus.publish(other)
    assert [e.id for _, e in bus.log] == [event.id, other.id]
    recorder = Recorder()
    await bus.subscribe("t.>", recorder, durable="d")
    await eventually(lambda: recorder.ids[-1:] == [other.id])
    assert recorder.ids == [event.id, other.id]


async def test_subjects_carry_the_prefix_and_filter(bus: MemoryBus) -> None:
    user = Event("identity.user.created", actor=1)
    project = Event("items.project.created", actor=1)
    await bus.publish(user)
    await bus.publish(project)
    assert [s for s, _ in bus.log] == ["t.identity.user.created", "t.items.project.created"]
    items_only = Recorder()
    everything = Recorder()
    await bus.subscribe("t.items.>", items_only, durable="items")
    await bus.subscribe("t.>", everything, durable="all")
    await eventually(lambda: len(everything.events) == 2)
    await eventually(lambda: len(items_only.events) == 1)
    assert items_only.ids == [project.id]


async def test_a_failing_handler_gets_the_event_again_and_later_events_wait(
    bus: MemoryBus,
) -> None:
    seen: list[str] = []
    failures = {"left": 2}

    async def flaky(event: Event) -> None:
        seen.append(event.payload["name"])
        if event.payload["name"] == "a" and failures["left"] > 0:
            failures["left"] -= 1
            raise RuntimeError("the database is busy")

    await bus.subscribe("t.>", flaky, durable="flaky")
    await bus.publish(Event("items.project.created", actor=1, payload={"name": "a"}))
    await bus.publish(Event("items.project.created", actor=1, payload={"name": "b"}))
    await eventually(lambda: "b" in seen)
    assert seen == ["a", "a", "a", "b"]


async def test_a_handler_unavailable_for_now_is_told_in_one_line_others_with_a_traceback(
    bus: MemoryBus, caplog: pytest.LogCaptureFixture
) -> None:
    failures = [LeaseLost("baselines: partition 3 was taken over"), RuntimeError("a bug")]

    async def failing(event: Event) -> None:
        if failures:
            raise failures.pop(0)

    with caplog.at_level(logging.WARNING, logger="plumbline.common.bus"):
        await bus.subscribe("t.>", failing, durable="failing")
        await bus.publish(Event("items.project.created", actor=1, payload={"name": "a"}))
        await eventually(lambda: not failures and len(caplog.records) >= 2)
    lost, bug = caplog.records[:2]
    assert (lost.levelno, lost.exc_info) == (logging.WARNING, None)
    assert "partition 3 was taken over" in lost.getMessage()
    assert "could not take event" in lost.getMessage()
    assert bug.levelno == logging.ERROR
    assert bug.exc_info is not None


async def test_stop_ends_delivery(bus: MemoryBus) -> None:
    stopped = Recorder()
    witness = Recorder()
    subscription = await bus.subscribe("t.>", stopped, durable="stopped")
    await bus.subscribe("t.>", witness, durable="witness")
    first = Event("items.project.created", actor=1)
    await bus.publish(first)
    await eventually(lambda: len(stopped.events) == 1)
    await subscription.stop()
    await bus.publish(Event("items.project.updated", actor=1))
    await eventually(lambda: len(witness.events) == 2)
    for _ in range(5):
        await asyncio.sleep(0)
    assert stopped.ids == [first.id]


async def test_stop_interrupts_a_handler_that_keeps_failing(bus: MemoryBus) -> None:
    attempts: list[str] = []

    async def broken(event: Event) -> None:
        attempts.append(event.id)
        raise RuntimeError("always")

    subscription = await bus.subscribe("t.>", broken, durable="broken")
    await bus.publish(Event("items.project.created", actor=1))
    await eventually(lambda: len(attempts) >= 2)
    await asyncio.wait_for(subscription.stop(), 2)
    count = len(attempts)
    await asyncio.sleep(0.2)  # longer than the first backoff steps
    assert len(attempts) == count


async def test_close_stops_every_subscription() -> None:
    bus = MemoryBus("t")
    recorder = Recorder()
    await bus.subscribe("t.>", recorder, durable="a")
    await bus.subscribe("t.>", recorder)
    await bus.close()
    await bus.publish(Event("items.project.created", actor=1))
    await asyncio.sleep(0.05)
    assert recorder.events == []


async def test_consumed_events_are_dropped_and_a_slow_subscriber_holds_them(
    bus: MemoryBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("plumbline.common.bus._memory._TRIM_CHUNK", 10)
    fast = Recorder()
    gate = asyncio.Event()
    slow_seen: list[str] = []

    async def slow(event: Event) -> None:
        await gate.wait()
        slow_seen.append(event.id)

    await bus.subscribe("t.>", fast, durable="fast")
    slow_subscription = await bus.subscribe("t.>", slow, durable="slow")
    events = [Event("items.item.created", actor=1, payload={"n": n}) for n in range(50)]
    for event in events:
        await bus.publish(event)
    await eventually(lambda: len(fast.events) == 50)
    assert bus.base == 0  # the slow subscriber has seen none
    assert len(bus.log) == 50
    gate.set()
    await eventually(lambda: len(slow_seen) == 50)
    assert slow_seen == [e.id for e in events]
    assert bus.base >= 40  # only the last, unfinished chunk is held
    assert bus.end == 50
    held = bus.base
    late = Recorder()
    await bus.subscribe("t.>", late, durable="late")  # a late durable one gets what is held
    await eventually(lambda: late.ids == [e.id for e in events[held:]])
    await slow_subscription.stop()  # a stopped subscription holds nothing back
    for event in [Event("items.item.created", actor=1) for _ in range(20)]:
        await bus.publish(event)
    await eventually(lambda: len(fast.events) == 70 and bus.base >= 60)


class BatchRecorder:
    """A batch handler that remembers each call's events."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def __call__(self, events: list[Event]) -> None:
        self.calls.append([e.id for e in events])

    @property
    def ids(self) -> list[str]:
        return [event_id for call in self.calls for event_id in call]


async def test_a_batch_subscriber_gets_the_waiting_events_in_order_up_to_its_limit(
    bus: MemoryBus,
) -> None:
    items = [Event("items.item.created", actor=1, payload={"n": n}) for n in range(5)]
    for event in items[:2]:
        await bus.publish(event)
    await bus.publish(Event("identity.user.created", actor=1))  # not the subscriber's
    for event in items[2:]:
        await bus.publish(event)
    recorder = BatchRecorder()
    await bus.subscribe_batch("t.items.>", recorder, durable="batch", max_batch=3)
    await eventually(lambda: len(recorder.ids) == 5)
    # Events of other subjects do not count against the limit.
    assert recorder.calls == [[e.id for e in items[:3]], [e.id for e in items[3:]]]


async def test_a_lone_event_is_a_batch_of_one(bus: MemoryBus) -> None:
    recorder = BatchRecorder()
    await bus.subscribe_batch("t.>", recorder, durable="batch")
    first = Event("items.item.created", actor=1)
    await bus.publish(first)
    await eventually(lambda: len(recorder.calls) == 1)
    second = Event("items.item.updated", actor=1)
    await bus.publish(second)
    await eventually(lambda: len(recorder.calls) == 2)
    assert recorder.calls == [[first.id], [second.id]]


async def test_a_failing_batch_is_delivered_again_whole_and_later_events_wait(
    bus: MemoryBus,
) -> None:
    calls: list[list[str]] = []
    failures = {"left": 2}

    async def flaky(events: list[Event]) -> None:
        calls.append([e.payload["name"] for e in events])
        if failures["left"] > 0:
            failures["left"] -= 1
            raise RuntimeError("the database is busy")

    for name in "abc":
        await bus.publish(Event("items.item.created", actor=1, payload={"name": name}))
    await bus.subscribe_batch("t.>", flaky, durable="flaky", max_batch=2)
    await eventually(lambda: calls[-1:] == [["c"]])
    assert calls == [["a", "b"], ["a", "b"], ["a", "b"], ["c"]]


async def test_a_batch_subscriber_holds_the_events_it_has_not_handled(
    bus: MemoryBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("plumbline.common.bus._memory._TRIM_CHUNK", 10)
    gate = asyncio.Event()
    recorder = BatchRecorder()

    async def slow(events: list[Event]) -> None:
        await gate.wait()
        await recorder(events)

    await bus.subscribe_batch("t.>", slow, durable="slow", max_batch=8)
    events = [Event("items.item.created", actor=1, payload={"n": n}) for n in range(30)]
    for event in events:
        await bus.publish(event)
    assert bus.base == 0
    gate.set()
    await eventually(lambda: len(recorder.ids) == 30)
    assert recorder.ids == [e.id for e in events]
    assert all(len(call) <= 8 for call in recorder.calls)
    assert bus.base >= 20
