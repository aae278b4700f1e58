"""The event every service publishes: one shape, serialised as JSON."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
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

    def to_json(self) -> bytes:
        """Wire form."""
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes | str) -> Event:
        """Parses the wire form."""
        return cls(**json.loads(data))
