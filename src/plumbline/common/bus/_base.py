"""What every bus offers."""

from __future__ import annotations

import abc
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from plumbline.common.dates import parse_iso, utcnow
from plumbline.common.errors import Unavailable
from plumbline.common.events import Event

log = logging.getLogger(__name__)

Handler = Callable[[Event], Awaitable[None]]
#: A handler of several events at once, in bus order; returning acknowledges them all.
BatchHandler = Callable[[list[Event]], Awaitable[None]]

#: The most events one call of a batch handler gets unless the subscriber says otherwise.
MAX_BATCH = 100


def subject_matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: ``*`` is one token, ``>`` the rest."""
    pattern_tokens = pattern.split(".")
    subject_tokens = subject.split(".")
    for index, token in enumerate(pattern_tokens):
        if token == ">":
            return len(subject_tokens) > index
        if index >= len(subject_tokens):
            return False
        if token != "*" and token != subject_tokens[index]:
            return False
    return len(pattern_tokens) == len(subject_tokens)


def partition_pattern(pattern: str, prefix: str, partition: int) -> str:
    """``pattern`` narrowed to one partition's subjects (``<prefix>.<s>.<e>.<a>.<p>``):
    ``plumbline.items.>`` becomes ``plumbline.items.*.*.3``."""
    tokens = pattern.split(".")
    if tokens[-1] == ">":
        tokens.pop()
    width = len(prefix.split(".")) + 3  # the prefix, then <service>.<entity>.<action>
    tokens += ["*"] * (width - len(tokens))
    return ".".join([*tokens[:width], str(partition)])


def durable_name(durable: str, partition: int | None, partitions: int) -> str:
    """The durable consumer of one partition: ``activity-p3of8``. One partition keeps
    the plain name (the consumer deployments had before partitions)."""
    if partition is None or partitions <= 1:
        return durable
    return f"{durable}-p{partition}of{partitions}"


class Subscription(abc.ABC):
    """A running consumer; ``stop`` ends it.

    A durable batch consumer says how far behind it is: ``behind_events``, the matching
    events fetched or published and not yet handled (as the bus last told), and
    ``behind_seconds``, how old the oldest of them is; both 0 once nothing waits.
    """

    _waiting: int = 0
    _oldest: datetime | None = None
    #: Told when the subscription stops (the bus that keeps it forgets it).
    on_stop: Callable[[Subscription], None] | None = None

    @property
    def behind_events(self) -> int:
        return self._waiting

    @property
    def behind_seconds(self) -> float:
        if self._oldest is None:
            return 0.0
        return max(0.0, (utcnow() - self._oldest).total_seconds())

    def fetched(self, events: list[Event], after: int) -> None:
        """Notes a batch about to be handled, with ``after`` more events waiting."""
        if events:
            self._waiting = len(events) + after
            self._oldest = parse_iso(events[0].time)

    def handled(self, events: list[Event], after: int) -> None:
        """Notes a batch handled, with ``after`` more events waiting (none older than
        the batch's last, whose age stands for theirs)."""
        self._waiting = after
        self._oldest = parse_iso(events[-1].time) if after and events else None

    def caught_up(self) -> None:
        """Notes that nothing waits."""
        self._waiting = 0
        self._oldest = None

    @abc.abstractmethod
    async def stop(self) -> None:
        """Stops delivering; in-flight handling finishes first."""

    def stopped(self) -> None:
        """For ``stop`` to call once it has stopped."""
        if self.on_stop is not None:
            self.on_stop(self)
            self.on_stop = None


class Bus(abc.ABC):
    """Publishes events and runs consumers.

    ``durable`` consumers see every event since the stream began, share work between
    replicas of the same name and get an event again when the handler raises; the
    handler acknowledges by returning. Without ``durable`` a consumer sees only new
    events, at most once (for caches).
    """

    prefix: str = "plumbline"

    #: How many partitions durable consumers split events into (``Event.partition``).
    #: With more than one, subjects end in the partition's number
    #: (``<prefix>.<type>.<partition>``), and the relay announces its position to each
    #: partition at start (``position_marker``); with one, subjects are
    #: ``<prefix>.<type>``.
    partitions: int = 1

    def subject_of(self, event: Event) -> str:
        """Where ``event`` is published."""
        subject = event.subject(self.prefix)
        if self.partitions > 1:
            return f"{subject}.{event.partition(self.partitions)}"
        return subject

    def widened(self, pattern: str) -> str:
        """``pattern`` for a subscriber that takes every partition: a pattern that ends
        in a whole event type gains the partition's token."""
        if self.partitions > 1 and not pattern.endswith(">"):
            return f"{pattern}.*"
        return pattern

    def batch_pattern(self, pattern: str, partition: int | None) -> tuple[str, bool]:
        """What a batch subscriber of ``pattern`` (of one ``partition``, or of all)
        follows, and whether it gets position markers: only a partition's subscriber
        does, and only where there are several."""
        if partition is None or self.partitions <= 1:
            return self.widened(pattern), False
        return partition_pattern(pattern, self.prefix, partition), True

    @abc.abstractmethod
    async def connect(self) -> None:
        """Opens connections and declares the stream."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stops every subscription and disconnects."""

    @abc.abstractmethod
    async def publish(self, event: Event) -> None:
        """Publishes once: a second publish of the same event id is dropped."""

    #: Whether a published event outlives this process (a crash loses none that
    #: ``publish`` took); where not, ``delivered`` says when they are safe.
    keeps_events: bool = True

    async def delivered(self) -> None:
        """Returns once every durable consumer has handled what was published so far
        (where the bus does not keep events: the events are safe from then on)."""
        return None

    @abc.abstractmethod
    async def subscribe(
        self, pattern: str, handler: Handler, durable: str | None = None
    ) -> Subscription:
        """Delivers events whose subject matches ``pattern`` to ``handler``."""

    @abc.abstractmethod
    async def subscribe_batch(
        self,
        pattern: str,
        handler: BatchHandler,
        durable: str,
        max_batch: int = MAX_BATCH,
        partition: int | None = None,
    ) -> Subscription:
        """A durable consumer that gets the matching events waiting, up to ``max_batch``,
        in one call (one transaction for many events), in order.

        It never waits for a batch to fill: one event waiting is a batch of one. A
        handler that raises gets the whole batch again. With ``partition``, it gets only
        that partition's events, position markers included, from a durable consumer of
        its own (``durable_name``); only one subscriber of a partition may run at a time
        (``common.leases``), or per-project order is lost. Without it, it gets every
        partition's events and no markers.
        """


def told_failed(exc: Exception, what: str) -> None:
    """Logs a handler's failure before its events are redelivered: a service that is
    unavailable for now (its database, a lease taken over) in one line, as it repeats
    with every redelivery while it lasts; anything else with its traceback."""
    if isinstance(exc, Unavailable):
        log.warning("handler could not take %s for now (%s); redelivering", what, exc)
    else:
        log.exception("handler failed for %s; redelivering", what)
