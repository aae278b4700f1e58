"""The transfer pool: uploads, downloads and reports, beside the API's admission
(``admission.py``).

Transfers (a file's or a report's body, a file's download) take no API slot: their time
is the client's and the network's, not the server's, and a slot held for it would starve
every other request. They have their own bounded pool (``Transfers``), with a cap per user
on bodies being sent; the latency admission follows is API handling only.

Long polls of the change feed (``GET /rest/labs/events?wait=``) wait for the next change
rather than work, up to 30 s: in an API slot they would hold it and teach the adaptive
limit that the API is slow. They have their own bound (``LongPolls``): many at once, a
few per user, refused at once (429) past either.
"""

from __future__ import annotations

from collections import Counter

from prometheus_client import Gauge

TRANSFERS = Gauge("plumbline_http_transfers", "Transfers (uploads, downloads, reports) open")
LONG_POLLS = Gauge("plumbline_http_long_polls", "Long polls of the change feed waiting")


class PerUser(Counter[int | None]):
    """How many of something each user has open; a user with none is not kept."""

    def add(self, user: int | None) -> None:
        self[user] += 1

    def remove(self, user: int | None) -> None:
        self[user] -= 1
        if self[user] <= 0:
            del self[user]


class Transfers:
    """At most ``concurrency`` transfers at once, and at most ``per_user`` bodies being
    sent by one user (uploads, reports); a transfer over either is refused at once (429),
    never queued: a queued body would hold its connection for nothing."""

    def __init__(self, concurrency: int, per_user: int, retry_after: int = 5) -> None:
        self.concurrency = concurrency
        self.per_user = per_user
        self.retry_after = retry_after
        self.open = 0
        self.sending = PerUser()

    def start(self, user: int | None, body: bool) -> str | None:
        """Starts a transfer (``body``: the client sends one), counted until ``end``; or
        says why it may not start now."""
        if self.open >= self.concurrency:
            return (
                f"The server is running its most transfers at once ({self.concurrency}); "
                "retry after the number of seconds in Retry-After."
            )
        if body and user is not None and self.sending[user] >= self.per_user:
            return (
                f"You are sending {self.per_user} files or reports already, the most one "
                "user may send at once; retry once one of them has finished (after the "
                "number of seconds in Retry-After)."
            )
        self.open += 1
        TRANSFERS.inc()
        if body and user is not None:
            self.sending.add(user)
        return None

    def end(self, user: int | None, body: bool) -> None:
        """A transfer ``start`` let in has ended."""
        self.open -= 1
        TRANSFERS.dec()
        if body and user is not None:
            self.sending.remove(user)


class LongPolls:
    """At most ``concurrency`` long polls waiting at once, ``per_user`` of one user."""

    def __init__(self, concurrency: int = 1024, per_user: int = 4, retry_after: int = 5) -> None:
        self.concurrency = concurrency
        self.per_user = per_user
        self.retry_after = retry_after
        self.open = 0
        self.by_user = PerUser()

    def start(self, user: int | None) -> str | None:
        """Starts a long poll, counted until ``end``; or says why it may not start now."""
        if self.open >= self.concurrency:
            return (
                f"The server holds its most long polls at once ({self.concurrency}); retry "
                "after the number of seconds in Retry-After, or read without wait."
            )
        if self.by_user[user] >= self.per_user:
            return (
                f"You are waiting in {self.per_user} long polls already, the most one user "
                "may; retry once one has answered, or read without wait."
            )
        self.open += 1
        self.by_user.add(user)
        LONG_POLLS.inc()
        return None

    def end(self, user: int | None) -> None:
        """A long poll ``start`` let in has answered."""
        self.open -= 1
        LONG_POLLS.dec()
        self.by_user.remove(user)
