"""The webhook rows' receiver and figures: deliveries kept per path over kept-alive
connections, latency from the change's time, order, and the targets they judge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from bench import hooks


def _delivery(cursor: int, ago: float) -> dict[str, object]:
    changed = datetime.now(UTC) - timedelta(seconds=ago)
    stamp = changed.strftime("%Y-%m-%dT%H:%M:%S.") + f"{changed.microsecond // 1000:03d}+0000"
    return {"type": "items.item.created", "data": {"cursor": cursor, "time": stamp}}


def test_the_receiver_keeps_each_delivery_and_its_latency() -> None:
    receiver = hooks.Receiver()
    receiver.start()
    try:
        with httpx.Client() as client:  # one connection, kept alive
            for cursor, ago in ((5, 0.5), (7, 0.2), (6, 0.1)):
                answer = client.post(receiver.url("/a"), json=_delivery(cursor, ago))
                assert answer.status_code == 200
            client.post(receiver.url("/b"), json=_delivery(9, 0.0))
        figures = hooks._latency(receiver, "/a", 3, seconds=5)
    finally:
        receiver.stop()
    assert (figures["delivered"], figures["in_order"]) == (3, False)  # 7 came before 6
    assert 0.05 < figures["p50_s"] < 0.5
    assert 0.4 < figures["max_s"] < 1.5
    assert receiver.count("/b") == 1


def test_the_targets_judge_latency_throughput_and_a_dead_receivers_cost() -> None:
    measured = {
        "latency": {"p99_s": 0.4},
        "beside_dead": {"p99_s": 0.6},
        "throughput": {"per_second": 1200.0},
        "long_poll": {"p50_s": 0.03},
    }
    judged = {
        name: (value, limit) for name, value, limit, _ in hooks.targets(measured, "distributed")
    }
    values = list(judged.values())
    assert values[0] == (0.4, hooks.LATENCY_P99_S)
    assert values[1] == (1200.0, hooks.DELIVERIES_PER_S)
    assert values[2][0] == 0.6 / 0.4  # 1.5: over the limit of 1.25
    assert values[3] == (0.03, hooks.LONG_POLL_S)
    # Embedded, throughput is reported without a limit.
    embedded = hooks.targets(measured, "embedded")
    assert embedded[1][2] is None
