"""The event every service publishes: one shape, serialised as JSON."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

from plumbline.common.dates import format_datetime, utcnow


@dataclass(frozen=True)
class Event:
    """A change that happened in one service.

    ``type`` is ``<service>.<entity>.<action>``; ``position`` is the event's place in
    its source's outbox (set when it is relayed) and lets readers wait for it.
    """

    type: str
    actor: int | None
    project: int | None = None
    object_ids: list[int] = field(default_factory=list)
    version: int = 1
    payload: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    time: str = field(default_factory=lambda: format_datetime(utcnow()))
    traceparent: str | None = None
    position: int = 0

    @property
    def source(self) -> str:
        """The service that wrote the event."""
        return self.type.split(".", 1)[0]

    @property
    def entity(self) -> str:
        """What changed: user, group, project, item..."""
        return self.type.split(".")[1]

    @property
    def action(self) -> str:
        """created, updated, deleted..."""
        return self.type.split(".")[-1]

    def subject(self, prefix: str) -> str:
        """The bus subject, ``<prefix>.<type>``."""
        return f"{prefix}.{self.type}"

    def partition(self, count: int) -> int:
        """Which of ``count`` consumer partitions the event belongs to: its project's
        (every change of one project in one partition, so per-project order holds: a
        deletion takes its subtree and its relationships with it); the changes outside
        projects (the organisation's: users, groups, settings) all in partition 0, in
        the order of the organisation feed. A position marker names its own."""
        if count <= 1:
            return 0
        if self.is_marker:
            return int(self.payload["partition"])
        return 0 if self.project is None else self.project % count

    @property
    def is_marker(self) -> bool:
        """Whether this is a position marker (``position_marker``), not a change. Asked
        of every event a subscriber looks at: one suffix test, no split."""
        return self.type.endswith(_MARKER_SUFFIX)

    def to_json(self) -> bytes:
        """Wire form."""
        # The members as they are, not ``asdict``: that deep-copies the payload (a
        # record's whole snapshot) only for it to be serialised, which cost more than
        # the serialising. A dataclass inside the payload still becomes an object.
        members = {name: getattr(self, name) for name in _MEMBERS}
        return json.dumps(members, separators=(",", ":"), default=_plain).encode()

    @classmethod
    def from_json(cls, data: bytes | str) -> Event:
        """Parses the wire form."""
        return cls(**json.loads(data))


_MEMBERS = tuple(f.name for f in fields(Event))

#: The type of position markers is ``<source>.position.relayed``.
_MARKER_SUFFIX = ".position.relayed"


def position_marker(source: str, position: int, partition: int) -> Event:
    """Says, in ``partition``, that ``source`` has relayed every event up to ``position``.

    With partitioned consumers a partition sees only some of a source's events. A
    watermark names each partition's newest event (``Outbox.watermarks``), which a
    partition reaches by consuming it; the relay sends a marker per partition only when it
    starts, so that a partition also passes events it never got (rows relayed under
    another partition count). A consumer that reaches the marker has everything of that
    source up to ``position`` in its partition (``Inbox``). Markers are not changes:
    nothing records them.
    """
    return Event(
        f"{source}{_MARKER_SUFFIX}",
        actor=None,
        payload={"partition": partition},
        position=position,
    )


def _plain(value: Any) -> Any:
    """What ``json`` cannot write itself: a dataclass becomes an object, as ``asdict``
    made it."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
