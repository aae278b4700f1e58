"""Webhooks in the hooks service: secrets sealed and signing as Standard Webhooks says
(checked with its ``standardwebhooks`` package), targets on private addresses refused,
who may subscribe to what, and delivery to a real local receiver: retried with backoff,
disabled after the retry period with the reason, resumed from the change that failed."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import stat
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import pytest
from standardwebhooks import Webhook

from plumbline.common.access import Access, Role
from plumbline.common.context import Principal
from plumbline.common.db import Database
from plumbline.common.errors import InvalidArgument, PermissionDenied
from plumbline.common.leases import Leases
from plumbline.services.hooks import delivery, objects, targets
from plumbline.services.hooks.delivery import MAX_BACKOFF, Deliverer, Policy
from plumbline.services.hooks.feed import ChangeFeed, ChangeQuery
from plumbline.services.hooks.owners import Owners
from plumbline.services.hooks.secrets import KEY_FILE, Sealer, new_secret, sign
from plumbline.services.hooks.webhooks import Webhooks, WebhookSpec
from tests.unit.services.conftest import ADMIN, access_cache, acting_as
from tests.unit.services.hooks.test_feed import item_event, make_feed

READER = Principal(2, "reader")
ROLES = {2: {3: Role.READ_ONLY, 4: Role.PROJECT_ADMIN}}


def test_a_signature_verifies_with_the_standard_webhooks_library() -> None:
    secret = new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    body = b'{"type":"items.item.created"}'
    stamp = int(__import__("time").time())
    headers = {
        "webhook-id": "evt-1",
        "webhook-timestamp": str(stamp),
        "webhook-signature": sign(secret, "evt-1", stamp, body),
    }
    assert Webhook(secret).verify(body, headers) == {"type": "items.item.created"}
    with pytest.raises(Exception, match="signature"):
        Webhook(new_secret()).verify(body, headers)
    tampered = body.replace(b"created", b"deleted")
    with pytest.raises(Exception, match="signature"):
        Webhook(secret).verify(tampered, headers)


def test_secrets_are_sealed_and_open_only_with_their_key(tmp_path: Path) -> None:
    key = base64.b64encode(os.urandom(32)).decode()
    sealer = Sealer.from_settings(key, tmp_path)
    secret = new_secret()
    sealed = sealer.seal(secret)
    assert secret not in sealed
    assert secret.removeprefix("whsec_") not in sealed
    assert sealer.open(sealed) == secret
    other = Sealer.from_settings(base64.b64encode(os.urandom(32)).decode(), tmp_path)
    with pytest.raises(ValueError, match="PLUMBLINE_WEBHOOKS_KEY"):
        other.open(sealed)
    with pytest.raises(ValueError, match="32 random bytes"):
        Sealer.from_settings("not base64!", tmp_path)
    # No key set: one is made in the data directory, readable by its owner only, and
    # used again by the next start.
    made = Sealer.from_settings(None, tmp_path)
    key_file = tmp_path / KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert Sealer.from_settings(None, tmp_path).open(made.seal(secret)) == secret


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://example.com/hook", "http"),
        ("example.com/hook", "http"),
        ("http://user:pw@example.com/", "password"),
        ("http://example.com/#x", "fragment"),
        ("http://example.com:port/", "not a valid URL"),
        ("http://example.com/" + "x" * 2000, "at most"),
    ],
)
def test_a_url_that_is_not_a_plain_http_url_is_refused(url: str, words: str) -> None:
    with pytest.raises(InvalidArgument, match=words):
        targets.check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/",
        "http://localhost/",
        "http://10.1.2.3/",
        "http://192.168.0.10/",
        "http://172.16.5.4/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[fe80::1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
    ],
)
async def test_targets_on_private_addresses_are_refused_unless_allowed(url: str) -> None:
    with pytest.raises(targets.Refused, match="non-public"):
        await targets.check_address(url, allow_private=False)
    await targets.check_address(url, allow_private=True)


async def test_a_public_address_is_a_target() -> None:
    await targets.check_address("https://93.184.215.14/hook", allow_private=False)
    await targets.check_address("http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/", False)


class FakeOwners:
    """The owners' access as identity would give it (``ROLES``; user 1 administers)."""

    def __init__(self, roles: Mapping[int, Mapping[int, Role]]) -> None:
        self.roles = roles

    async def access_of(self, user_id: int) -> Access:
        if user_id == ADMIN.user_id:
            return Access(ADMIN, {})
        return Access(Principal(user_id, f"user{user_id}"), dict(self.roles.get(user_id, {})))


def make_store(db: Database, feed: ChangeFeed, tmp_path: Path, allow_private: bool) -> Webhooks:
    return Webhooks(
        db,
        feed,
        access_cache(ROLES),
        cast(Owners, FakeOwners(ROLES)),
        Sealer.from_settings(None, tmp_path),
        allow_private=allow_private,
        secret_grace=timedelta(hours=1),
    )


async def test_who_may_subscribe_to_what(hooks_db: Database, tmp_path: Path) -> None:
    store = make_store(hooks_db, make_feed(hooks_db), tmp_path, allow_private=True)
    url = "http://127.0.0.1:9/hook"
    with acting_as(READER):
        # Every change of a project: its administrators only.
        with pytest.raises(PermissionDenied, match="administrator of project 3"):
            await store.create(WebhookSpec(url=url, projects=[3]))
        await store.create(WebhookSpec(url=url, projects=[4]))
        # Narrowed, a reader may.
        row, _ = await store.create(WebhookSpec(url=url, projects=[3], object_types=["TEST_RUN"]))
        # Not a project they cannot read, nor every project.
        with pytest.raises(PermissionDenied, match="no access to project 9"):
            await store.create(WebhookSpec(url=url, projects=[9], object_types=["ITEM"]))
        with pytest.raises(PermissionDenied, match="every project"):
            await store.create(WebhookSpec(url=url, object_types=["ITEM"]))
        # Nor widen their own to the whole project later.
        with pytest.raises(PermissionDenied, match="administrator"):
            await store.update(row.id, WebhookSpec(), ["objectTypes"])
        with pytest.raises(InvalidArgument, match="objectTypes must be among"):
            await store.create(WebhookSpec(url=url, projects=[3], object_types=["PLANET"]))
        with pytest.raises(InvalidArgument, match="cannot change owner"):
            await store.update(row.id, WebhookSpec(), ["owner"])
    with acting_as(ADMIN):
        await store.create(WebhookSpec(url=url))  # every project's changes
        # The administrator sees the reader's; the reader does not see the administrator's.
        assert (await store.get(row.id)).owner == READER.user_id
    with acting_as(Principal(5, "stranger")), pytest.raises(Exception, match="does not exist"):
        await store.get(row.id)


async def test_a_target_on_a_private_address_is_refused(
    hooks_db: Database,
    tmp_path: Path,
) -> None:
    store = make_store(hooks_db, make_feed(hooks_db), tmp_path, allow_private=False)
    with acting_as(ADMIN):
        with pytest.raises(InvalidArgument, match=r"url is refused.*127\.0\.0\.1.*non-public"):
            await store.create(WebhookSpec(url="http://127.0.0.1:8080/hook"))
        with pytest.raises(InvalidArgument, match=r"169\.254\.169\.254"):
            await store.create(WebhookSpec(url="http://169.254.169.254/"))


def test_retries_back_off_exponentially_with_jitter_up_to_an_hour() -> None:
    policy = Policy(timedelta(hours=24), retry_base=5.0, timeout=15, allow_private=False)
    for attempts, ideal in ((1, 5.0), (2, 10.0), (3, 20.0), (8, 640.0), (20, MAX_BACKOFF)):
        waits = {policy.backoff(attempts) for _ in range(20)}
        assert all(0.8 * ideal <= w <= 1.2 * ideal for w in waits)
        assert len(waits) > 1  # jitter: retries of many webhooks do not come in step


class Always:
    """Leases of a replica that holds every partition (the embedded default's)."""

    count = 4

    def holds(self, partition: int) -> bool:
        return True

    async def hold(self, session: Any, partition: int) -> None:
        return None


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[int], list[dict[str, Any]]]]:
    """A local receiver: its URL, the statuses to answer (the last repeats), and what
    it received."""
    answers: list[int] = [500]
    got: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            self.send_response(answers[0] if len(answers) == 1 else answers.pop(0))
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", answers, got
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
async def delivering(
    hooks_db: Database,
    tmp_path: Path,
) -> AsyncIterator[tuple[Webhooks, Deliverer, ChangeFeed]]:
    feed = make_feed(hooks_db)
    store = make_store(hooks_db, feed, tmp_path, allow_private=True)
    deliverer = Deliverer(
        hooks_db,
        feed,
        store.sealer,
        cast(Owners, FakeOwners(ROLES)),
        cast(Leases, Always()),
        Policy(timedelta(seconds=1.0), retry_base=0.05, timeout=5, allow_private=True),
    )
    try:
        yield store, deliverer, feed
    finally:
        await deliverer.stop()


async def test_a_webhook_failing_past_the_retry_period_is_disabled_then_resumes(
    delivering: tuple[Webhooks, Deliverer, ChangeFeed],
    receiver: tuple[str, list[int], list[dict[str, Any]]],
) -> None:
    store, deliverer, feed = delivering
    url, answers, got = receiver
    with acting_as(ADMIN):
        row, _ = await store.create(WebhookSpec(url=url, projects=[3]))
    await feed.record_many([item_event(3, 10, "created", 1), item_event(3, 11, "created", 2)])
    deliverer.start()
    with acting_as(ADMIN):
        for _ in range(100):
            row = await store.get(row.id)
            if not row.active:
                break
            await asyncio.sleep(0.05)
        assert not row.active
        assert row.disabled_reason.startswith("Disabled ")
        assert "failed for" in row.disabled_reason
        assert "answered 500" in row.disabled_reason
        log, total = await store.deliveries(row.id, 0, 100)
    # Every try was of the first change, backing off; none of the second.
    assert total == len(got) >= 3
    assert {d["data"]["objectId"] for d in got} == {10}
    assert [entry.attempt for entry in reversed(log)] == list(range(1, total + 1))
    assert all(entry.outcome == "FAILED" for entry in log)
    # Made active again, it goes on from the change that failed.
    answers[:] = [200]
    with acting_as(ADMIN):
        await store.update(row.id, WebhookSpec(active=True), ["active"])
    for _ in range(100):
        if [d["data"]["objectId"] for d in got[total:]] == [10, 11]:
            break
        await asyncio.sleep(0.05)
    assert [d["data"]["objectId"] for d in got[total:]] == [10, 11]
    with acting_as(ADMIN):
        resumed = await store.get(row.id)
    assert resumed.active
    assert resumed.disabled_reason is None
    assert resumed.attempts == 0


async def test_a_change_recorded_here_wakes_only_the_webhooks_of_its_project(
    delivering: tuple[Webhooks, Deliverer, ChangeFeed],
    receiver: tuple[str, list[int], list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the idle look made an hour long, a change is delivered only because its
    recording woke its webhook; another project's webhook stays asleep."""
    store, deliverer, feed = delivering
    url, answers, got = receiver
    answers[:] = [200]
    monkeypatch.setattr(delivery, "IDLE_SECONDS", 3600.0)
    with acting_as(ADMIN):
        mine, _ = await store.create(WebhookSpec(url=url, projects=[3]))
        other, _ = await store.create(WebhookSpec(url=url + "/other", projects=[9]))
    deliverer.start()
    for _ in range(100):  # both have had their first look
        if {mine.id, other.id} <= set(deliverer._wanted):
            break
        await asyncio.sleep(0.05)
    rounds = {"n": 0}
    looked = deliverer.deliver

    async def counted(webhook_id: int) -> float | None:
        if webhook_id == other.id:
            rounds["n"] += 1
        return await looked(webhook_id)

    monkeypatch.setattr(deliverer, "deliver", counted)
    await feed.record_many([item_event(3, 10, "created", 1)])
    for _ in range(100):
        if got:
            break
        await asyncio.sleep(0.05)
    assert [d["data"]["objectId"] for d in got] == [10]
    assert rounds["n"] == 0


@pytest.mark.parametrize(
    ("event_type", "kind", "object_id", "resource"),
    [
        ("items.item.updated", "UPDATE", 7, ("items", 7)),
        ("items.relationship.created", "CREATE", 8, ("relationships", 8)),
        ("testmgmt.testrun.updated", "UPDATE", 9, ("testruns", 9)),
        ("attachments.attachment.created", "CREATE", 10, ("attachments", 10)),
        ("baselines.baseline.created", "CREATE", 11, ("baselines", 11)),
        ("items.item.deleted", "DELETE", 7, None),  # gone: nothing to read
        ("identity.user.created", "CREATE", 5, None),  # no record a webhook carries
        ("items.itemtag.created", "CREATE", 3, None),
        ("items.item.updated", "UPDATE", None, None),
    ],
)
def test_the_record_a_change_names_is_read_from_its_resource(
    event_type: str, kind: str, object_id: int | None, resource: objects.Ref | None
) -> None:
    assert objects.reference(event_type, kind, object_id) == resource


async def test_a_deleted_webhooks_id_is_never_given_again(
    hooks_db: Database,
    tmp_path: Path,
) -> None:
    store = make_store(hooks_db, make_feed(hooks_db), tmp_path, allow_private=True)
    with acting_as(ADMIN):
        first, _ = await store.create(WebhookSpec(url="http://127.0.0.1:9/a"))
        await store.delete(first.id)
        second, _ = await store.create(WebhookSpec(url="http://127.0.0.1:9/b"))
    assert second.id > first.id


class _SlowRecords:
    """Records read in 50 ms a request, each request's references kept."""

    def __init__(self) -> None:
        self.requests: list[set[objects.Ref]] = []
        self.finished: list[set[objects.Ref]] = []

    async def many(self, owner: int, refs: set[objects.Ref]) -> dict[objects.Ref, Any]:
        self.requests.append(set(refs))
        await asyncio.sleep(0.05)
        self.finished.append(set(refs))
        if ("items", 113) in refs:
            raise objects.RecordUnavailable("the API answered 503")
        return {ref: {"id": ref[1], "owner": owner} for ref in refs if ref[1] != 77}


def _changes(ids: range, event_type: str = "UPDATE") -> list[Any]:
    return [
        type("Change", (), {"type": "items.item.updated", "event_type": event_type, "object_id": n})
        for n in ids
    ]


async def test_records_are_read_a_span_at_a_time_the_next_while_this_one_is_sent() -> None:
    records = _SlowRecords()
    changes = _changes(range(100))
    started = asyncio.get_running_loop().time()
    with delivery._ReadAhead(cast(Any, records), 7, changes) as read:
        got = [await read.record(i) for i in range(60)]
    took = asyncio.get_running_loop().time() - started
    assert [g["id"] for g in got] == list(range(60))
    assert got[0]["owner"] == 7
    span = delivery.READ_SPAN
    # Two requests, the second sent halfway through the first span, not one per change.
    assert records.requests[0] == {("items", n) for n in range(span)}
    assert records.requests[1] == {("items", n) for n in range(span, 2 * span)}
    assert len(records.requests) == 2
    assert took < 0.2
    # A record the owner may not read (left out of the answer) is sent without one.
    with delivery._ReadAhead(cast(Any, records), 7, _changes(range(76, 79))) as read:
        assert [await read.record(i) for i in range(3)] == [
            {"id": 76, "owner": 7},
            None,
            {"id": 78, "owner": 7},
        ]


async def test_a_span_not_taken_is_cancelled_and_a_failed_read_is_told() -> None:
    records = _SlowRecords()
    changes = _changes(range(100, 200))
    with delivery._ReadAhead(cast(Any, records), 7, changes) as read:
        await read.record(0)
        # Halfway: the next span is asked for, then the batch ends (a failed delivery).
        await read.record(delivery.READ_SPAN // 2)
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    assert len(records.requests) == 2
    assert len(records.finished) == 1
    # A request that fails tells every change of its span why, rather than raising.
    with delivery._ReadAhead(cast(Any, records), 7, changes[10:20]) as read:
        failed = [await read.record(i) for i in range(10)]
    assert all(isinstance(f, objects.RecordUnavailable) for f in failed)
    # Without records (the webhook leaves the record out), and for deletions, nothing is
    # read.
    before = len(records.requests)
    with delivery._ReadAhead(None, 7, changes) as read:
        assert await read.record(3) is None
    with delivery._ReadAhead(cast(Any, records), 7, _changes(range(5), "DELETE")) as read:
        assert await read.record(3) is None
    assert len(records.requests) == before


async def test_a_record_read_too_long_before_it_is_sent_is_read_again_alone() -> None:
    records = _SlowRecords()
    now = [0.0]
    with delivery._ReadAhead(cast(Any, records), 7, _changes(range(10)), lambda: now[0]) as read:
        await read.record(0)
        await read.record(1)
        assert len(records.requests) == 1
        now[0] += delivery.FRESH_SECONDS + 0.1  # a slow receiver
        assert (await read.record(2))["id"] == 2
        assert records.requests[1:] == [{("items", 2)}]
        assert (await read.record(3))["id"] == 3
        assert records.requests[2:] == [{("items", 3)}]


@pytest.fixture
async def odd_receiver() -> AsyncIterator[tuple[str, list[str]]]:
    """A receiver whose answer depends on the path: ``/ok`` 204, ``/moved`` a redirect
    to ``/ok``, ``/slow`` no answer for 2 s, ``/big`` 200 with 1 MiB; the paths asked."""
    asked: list[str] = []

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode()
                path = head.split(" ", 2)[1]
                asked.append(path)
                length = next(
                    int(line.split(":", 1)[1])
                    for line in head.split("\r\n")
                    if line.lower().startswith("content-length:")
                )
                await reader.readexactly(length)
                if path == "/moved":
                    writer.write(
                        b"HTTP/1.1 302 Found\r\nlocation: /ok\r\ncontent-length: 0\r\n\r\n"
                    )
                elif path == "/slow":
                    await asyncio.sleep(2)
                elif path == "/big":
                    size = 1024 * 1024
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % size)
                    writer.write(b"x" * size)
                else:
                    writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", asked
    finally:
        server.close()


async def test_a_delivery_follows_no_redirect_waits_no_longer_than_its_timeout_and_reads_little(
    delivering: tuple[Webhooks, Deliverer, ChangeFeed], odd_receiver: tuple[str, list[str]]
) -> None:
    base, asked = odd_receiver
    _, deliverer, feed = delivering
    # Its client is made on first use, with this timeout.
    deliverer.policy = Policy(timedelta(hours=1), retry_base=0.05, timeout=0.5, allow_private=True)
    await feed.record_many([item_event(3, 10, "created", 1)])
    [change], _ = await feed.read_as(Access(ADMIN, {}), ChangeQuery(after=0, limit=1))
    secrets = [new_secret()]

    async def send(path: str) -> delivery.Outcome:
        row = type("Row", (), {"url": base + path})
        return await deliverer._send(row, secrets, change, {"id": 10})

    ok = await send("/ok")
    assert (ok.delivered, ok.code, ok.error) == (True, 204, None)
    moved = await send("/moved")
    assert (moved.delivered, moved.code) == (False, 302)
    assert moved.error == "the receiver answered 302 (redirects are not followed)"
    started = asyncio.get_running_loop().time()
    slow = await send("/slow")
    assert asyncio.get_running_loop().time() - started < 1.5
    assert (slow.delivered, slow.error) == (False, "no answer within 0.5 s")
    big = await send("/big")
    assert (big.delivered, big.code) == (True, 200)
    # The answer after the first 64 KiB is not read: the connection goes, and the
    # next delivery opens another and is delivered.
    assert (await send("/ok")).delivered
    assert asked == ["/ok", "/moved", "/slow", "/big", "/ok"]
    # Nothing listening: told as such.
    nobody = await deliverer._send(
        type("Row", (), {"url": "http://127.0.0.1:9/hook"}), secrets, change, None
    )
    assert not nobody.delivered
    assert nobody.code is None
    assert nobody.error is not None
    assert nobody.error.startswith("could not deliver: ClientConnectorError")
