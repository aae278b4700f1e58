"""The event's wire form."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import pytest

from plumbline.common.events import Event


@dataclass
class Nested:
    value: int


def test_wire_form_is_what_asdict_gives() -> None:
    payload = {"snapshot": {"fields": {"steps": [{"status": "PASSED"}]}}, "pair": (1, 2)}
    event = Event("items.item.updated", actor=1, project=2, object_ids=[3], payload=payload)

    assert event.to_json() == json.dumps(asdict(event), separators=(",", ":")).encode()
    assert Event.from_json(event.to_json()).payload["snapshot"] == payload["snapshot"]


def test_a_dataclass_in_the_payload_becomes_an_object() -> None:
    event = Event("items.item.updated", actor=1, payload={"nested": Nested(7)})

    assert json.loads(event.to_json())["payload"]["nested"] == {"value": 7}


def test_what_json_cannot_write_is_refused() -> None:
    event = Event("items.item.updated", actor=1, payload={"when": object()})

    with pytest.raises(TypeError, match="object is not JSON serializable"):
        event.to_json()
