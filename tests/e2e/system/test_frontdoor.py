"""The front door under attack and under load: stalled bodies and headers, a flood of
connections, repeated wrong passwords, user names and licence types, forged Host headers
and forged log lines. Counts and times are bounded; everything stays on loopback.

Tests that take the ``system`` fixture run in both topologies; those that need tight
limits (a 1 s body timeout, two throttle slots) start their own embedded process.
"""

from __future__ import annotations

import base64
import concurrent.futures
import itertools
import socket
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.api import MakeUser, assert_error, eventually, unique, user_body
from tests.e2e.topology import Process, System, base_env, start_process


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _stalled_post(port: int, authorization: str | None) -> socket.socket:
    """A connection that sent a POST's headers, promising a body it never sends."""
    sock = _connect(port)
    lines = [
        "POST /rest/v1/projects HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Content-Length: 1000",
    ]
    if authorization:
        lines.append(f"Authorization: {authorization}")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    return sock


def _read_answer(sock: socket.socket) -> tuple[int, bytes, bool]:
    """Status, head, and whether the server then closed the connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed without an answer after {data!r}")
        data += chunk
    head = data.split(b"\r\n\r\n", 1)[0]
    status = int(head.split(b" ")[1])
    closed = False
    try:
        while sock.recv(65536):
            pass
        closed = True
    except TimeoutError:
        pass
    return status, head, closed


def _basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


# -- stalled bodies, in both topologies -------------------------------------------------


def test_unauthenticated_stalled_bodies_are_refused_at_once(system: System) -> None:
    port = system.gateway.http_port
    stalled = [_stalled_post(port, None) for _ in range(80)]
    try:
        for sock in stalled:
            sock.settimeout(5)
            status, head, closed = _read_answer(sock)
            assert status == 401
            assert closed, "a refused request with an unread body keeps its connection"
            assert b"connection: close" in head.lower()
    finally:
        for sock in stalled:
            sock.close()


def test_stalled_bodies_hold_no_slot(system: System, admin: httpx.Client) -> None:
    """80 authenticated connections stall their bodies (more than the 64 slots); other
    requests are still answered at once."""
    port = system.gateway.http_port
    assert admin.get("/users/current").status_code == 200  # the credentials are cached
    authorization = _basic("admin", system.admin_password)
    stalled = [_stalled_post(port, authorization) for _ in range(80)]
    try:
        started = time.monotonic()
        for _ in range(20):
            assert admin.get("/users/current").status_code == 200
        assert time.monotonic() - started < 5
        created = admin.post("/projects", json={"projectKey": unique("ST").upper()})
        assert created.status_code in (201, 400), created.text
    finally:
        for sock in stalled:
            sock.close()


# -- user names, licence types, Host, in both topologies ----------------------------------


@pytest.mark.parametrize("name", ["with:colon", "line\nbreak", "tab\there", " padded", "nul\x01"])
def test_user_names_are_validated(admin: httpx.Client, name: str) -> None:
    response = admin.post("/users", json=user_body(username=name))
    assert_error(response, 400, "username may contain any printable characters except ':'")


def test_user_names_are_validated_on_update(admin: httpx.Client, make_user: MakeUser) -> None:
    user_id, _, _, _ = make_user()
    response = admin.put(f"/users/{user_id}", json={"username": "a:b"})
    assert_error(response, 400, "except ':'")


def test_only_administrators_change_the_licence_type(
    admin: httpx.Client, make_user: MakeUser
) -> None:
    user_id, username, _, client = make_user()
    mine = client.get(f"/users/{user_id}").json()["data"]
    assert mine["licenseType"] == "NAMED"
    refused = client.put(f"/users/{user_id}", json={"licenseType": "FLOATING"})
    assert_error(refused, 401, "Only organization or user administrators may change licenseType")
    same = client.put(f"/users/{user_id}", json={"licenseType": "NAMED", "title": "Tester"})
    assert same.status_code == 200, same.text
    changed = admin.put(f"/users/{user_id}", json={"licenseType": "FLOATING"})
    assert changed.status_code == 200, changed.text
    assert admin.get(f"/users/{user_id}").json()["data"]["licenseType"] == "FLOATING"
    assert username


def test_a_forged_host_does_not_reach_links(system: System, admin: httpx.Client) -> None:
    forged = admin.get("/projects", headers={"Host": "evil.example"})
    assert forged.status_code == 200
    assert forged.json()["links"]
    assert "evil.example" not in forged.text
    assert f"127.0.0.1:{system.gateway.http_port}" in forged.text
    created = admin.post(
        "/projects",
        json={"projectKey": unique("HO").upper(), "fields": {"name": "host"}},
        headers={"Host": "evil.example:80"},
    )
    assert created.status_code == 201, created.text
    assert "evil.example" not in created.json()["meta"]["location"]
    assert "evil.example" not in created.headers["location"]


# -- passwords, in both topologies ------------------------------------------------------


def _get_as(system: System, username: str, password: str, address: str) -> httpx.Response:
    # uvicorn takes X-Forwarded-For from loopback proxies, so each test may act as its
    # own client address.
    return httpx.get(
        f"{system.url}/rest/v1/users/current",
        auth=(username, password),
        headers={"X-Forwarded-For": address},
        timeout=30,
    )


def test_wrong_passwords_are_slowed_without_locking_the_user_out(
    system: System, make_user: MakeUser
) -> None:
    _, username, password, _ = make_user()
    home, attacker = "10.20.0.1", f"10.21.{time.time_ns() % 250}.2"
    assert _get_as(system, username, password, home).status_code == 200
    started = time.monotonic()
    statuses = [_get_as(system, username, f"wrong-{i}", attacker) for i in range(40)]
    elapsed = time.monotonic() - started
    codes = [r.status_code for r in statuses]
    assert codes[:4] == [401] * 4
    assert codes.count(429) >= 30, codes
    refused = next(r for r in statuses if r.status_code == 429)
    assert int(refused.headers["Retry-After"]) >= 1
    assert "Too many failed logins" in refused.json()["meta"]["message"]
    assert elapsed < 20
    # Wait out the current refusal with one more wrong password: it fails (401) and starts
    # a longer refusal at once, so the attempt right after it falls inside that one.
    for _ in range(10):
        again = _get_as(system, username, "wrong-again", attacker)
        if again.status_code == 401:
            break
        assert again.status_code == 429, again.text
        time.sleep(float(again.headers["Retry-After"]))
    assert again.status_code == 401
    # The attacker is refused even with the right password; the user, from an address
    # they have logged in from, is not. (Names are case-insensitive: a differently cased
    # name is a new Basic credential, not in the gateway's cache of verified ones.)
    assert _get_as(system, username.capitalize(), password, attacker).status_code == 429
    assert _get_as(system, username.upper(), password, home).status_code == 200


def test_unknown_users_cost_as_much_as_wrong_passwords(system: System, make_user: MakeUser) -> None:
    names = [make_user()[1] for _ in range(3)]
    known: list[float] = []
    unknown: list[float] = []
    for round_ in range(6):
        for samples, name in ((known, names[round_ % 3]), (unknown, unique("ghost"))):
            started = time.perf_counter()
            response = _get_as(system, name, "wrong", f"10.30.{round_}.{len(samples)}")
            samples.append(time.perf_counter() - started)
            assert response.status_code == 401
    ratio = statistics.median(unknown) / statistics.median(known)
    assert 0.5 < ratio < 2, (known, unknown)


def test_token_endpoint_counts_failed_secrets(system: System) -> None:
    client_id = unique("pl_nobody")
    address = f"10.40.{time.time_ns() % 250}.1"
    codes = [
        httpx.post(
            f"{system.url}/rest/oauth/token",
            data={"grant_type": "client_credentials"},
            auth=(client_id, "wrong"),
            headers={"X-Forwarded-For": address},
        ).status_code
        for _ in range(8)
    ]
    assert codes[:4] == [401] * 4
    assert 429 in codes


# -- tight limits: an embedded process of their own -------------------------------------


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    """Two slots, a short queue, one-second body and header limits, INFO logs."""
    workdir: Path = tmp_path_factory.mktemp("tight")
    env = base_env(workdir)
    env.update(
        PLUMBLINE_THROTTLE_CONCURRENCY="2",
        PLUMBLINE_THROTTLE_QUEUE="4",
        PLUMBLINE_BODY_TIMEOUT="1",
        PLUMBLINE_HEADER_TIMEOUT="1",
        PLUMBLINE_LOG_LEVEL="INFO",
        PLUMBLINE_LOGIN_FAILURES_PER_ADDRESS="6",
        PLUMBLINE_TRUSTED_HOSTS="plumbline.example",
        # One gateway: its slots and queue are a gateway process's (each worker has its own).
        PLUMBLINE_WORKERS="0",
    )
    process = start_process("tight", ["--target", "all"], env, workdir)
    try:
        yield process
    finally:
        assert process.stop() == 0


def test_a_stalled_body_ends_with_408(tight: Process) -> None:
    authorization = _basic("admin", "admin")
    assert httpx.get(
        f"http://127.0.0.1:{tight.http_port}/rest/v1/users/current",
        headers={"Authorization": authorization},
    ).is_success
    sock = _stalled_post(tight.http_port, authorization)
    try:
        sock.settimeout(5)
        started = time.monotonic()
        status, _, closed = _read_answer(sock)
        assert status == 408
        assert closed
        assert 0.9 < time.monotonic() - started < 4
    finally:
        sock.close()


def test_stalled_headers_are_closed(tight: Process) -> None:
    idle = _connect(tight.http_port)
    trickle = _connect(tight.http_port)
    try:
        trickle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        for sock in (idle, trickle):
            sock.settimeout(5)
            started = time.monotonic()
            assert sock.recv(100) == b""  # closed by the server
            assert time.monotonic() - started < 4
    finally:
        idle.close()
        trickle.close()


def test_a_flood_gets_quick_429s_and_some_successes(tight: Process) -> None:
    """48 clients that ignore Retry-After: some succeed, the rest get a quick 429 with
    Retry-After, and a client's next request waits that long on the server."""
    url = f"http://127.0.0.1:{tight.http_port}/rest/v1/users/current"
    assert httpx.get(url, auth=("admin", "admin")).is_success

    def client(_: int) -> list[tuple[int, float, str | None]]:
        results = []
        with httpx.Client(auth=("admin", "admin"), timeout=30) as http:
            for _ in range(4):
                started = time.perf_counter()
                response = http.get(url)
                elapsed = time.perf_counter() - started
                results.append((response.status_code, elapsed, response.headers.get("retry-after")))
        return results

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(48) as pool:
        batches = list(pool.map(client, range(48)))
    assert time.monotonic() - started < 60
    results = [r for batch in batches for r in batch]
    statuses = [status for status, _, _ in results]
    assert set(statuses) <= {200, 429}
    assert statuses.count(200) >= 10
    throttled = [(elapsed, retry) for status, elapsed, retry in results if status == 429]
    assert throttled, "no request was throttled"
    assert all(retry is not None and int(retry) >= 1 for _, retry in throttled)
    firsts = [next(r for r in b if r[0] == 429) for b in batches if any(r[0] == 429 for r in b)]
    assert statistics.median(elapsed for _, elapsed, _ in firsts) < 0.5
    for batch in batches:
        for (status, took, retry), (_, elapsed, _) in itertools.pairwise(batch):
            if status == 429:  # the hold starts when the 429 is decided, before it is sent
                assert retry is not None
                assert took + elapsed >= 0.9 * int(retry), batch


def test_failed_logins_are_limited_per_address(tight: Process) -> None:
    url = f"http://127.0.0.1:{tight.http_port}/rest/v1/users/current"
    address = "10.50.0.1"
    codes = [
        httpx.get(url, auth=(unique("who"), "x"), headers={"X-Forwarded-For": address}).status_code
        for _ in range(10)
    ]
    assert codes[:5] == [401] * 5
    assert 429 in codes
    other = httpx.get(url, auth=(unique("who"), "x"), headers={"X-Forwarded-For": "10.50.0.2"})
    assert other.status_code == 401


def test_trusted_hosts_reach_links_and_log_lines_are_escaped(tight: Process) -> None:
    base = f"http://127.0.0.1:{tight.http_port}/rest/v1"
    trusted = httpx.get(
        f"{base}/projects", auth=("admin", "admin"), headers={"Host": "plumbline.example"}
    )
    assert "http://plumbline.example/rest/v1/" in trusted.text
    forged = httpx.get(
        f"{base}/nothing%0A2026-01-01 INFO forged line",
        auth=("admin", "admin"),
        headers={"X-Request-Id": "id\twith\ttabs"},
    )
    assert forged.status_code == 404
    assert forged.headers["x-request-id"] != "id\twith\ttabs"
    # The access log line is written once the answer is sent: wait for it.
    assert eventually(lambda: "/nothing\\x0a2026-01-01" in tight.log.read_text())
    log = tight.log.read_text()
    assert not any(line.startswith("2026-01-01 INFO forged") for line in log.splitlines())
