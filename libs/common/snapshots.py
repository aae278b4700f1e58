"""What a change event carries for the history: the record as it is after the change.

Every event that gives an abstract item (item, test plan, test cycle, test run,
attachment) a new version has ``version`` = that version and, in its payload,
``snapshot`` (the owner's wire record in protobuf's JSON form, built as the owner's
servicer builds it, with dates in their default form and nothing that depends on who
asked) and ``recordType`` (the message's full name). A deletion carries
``deleted: true`` and no snapshot. The baselines service keeps these as the versions.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

#: Members of a record message that describe the caller, not the record.
CALLER_MEMBERS = ("allowed",)


def snapshot_payload(record: Message) -> dict[str, Any]:
    """``snapshot`` and ``recordType`` of an event's payload for ``record``."""
    copy = type(record)()
    copy.CopyFrom(record)
    for name in CALLER_MEMBERS:
        if name in copy.DESCRIPTOR.fields_by_name:
            copy.ClearField(name)
    return {
        "snapshot": json_format.MessageToDict(copy),
        "recordType": copy.DESCRIPTOR.full_name,
    }


def snapshot_json(snapshot: dict[str, Any]) -> bytes:
    """A snapshot as the history stores and sends it."""
    return json.dumps(snapshot, separators=(",", ":")).encode()


def parse_snapshot(data: bytes | str, message: Message) -> Message:
    """Fills ``message`` (of the snapshot's record type) from a stored snapshot."""
    return json_format.Parse(data, message, ignore_unknown_fields=True)
