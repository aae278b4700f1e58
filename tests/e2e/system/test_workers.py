"""The embedded default's gateway workers: every one serves the API, hears identity's
events as soon as the others, is replaced when it dies, and ends with the process that
started it; and its analytics process, which alone answers traces and reports.

Which worker takes a new connection is the kernel's choice; to reach one worker alone,
the tests stop the others (SIGSTOP): a stopped process accepts nothing, so every new
connection goes to the one left running.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.api import api_credentials, assert_error, eventually, new_project, type_ids
from tests.e2e.topology import System, start_embedded

WORKERS = 2


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[System]:
    """An embedded system of its own with two gateway workers, whatever the cores."""
    workdir: Path = tmp_path_factory.mktemp("workers")
    system = start_embedded(workdir, {"PLUMBLINE_WORKERS": str(WORKERS)})
    try:
        yield system
    finally:
        assert system.stop() == {"all": 0}


@contextlib.contextmanager
def only(pid: int, pids: list[int]) -> Iterator[None]:
    """Every worker of ``pids`` but ``pid`` stopped (SIGSTOP) while inside."""
    others = [p for p in pids if p != pid]
    for other in others:
        os.kill(other, signal.SIGSTOP)
    try:
        yield
    finally:
        for other in others:
            os.kill(other, signal.SIGCONT)


def _me(system: System, token: str) -> httpx.Response:
    """``GET /users/current`` on a new connection: whichever worker accepts it answers."""
    return httpx.get(
        f"{system.url}/rest/v1/users/current",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )


def _credentials_and_token(system: System) -> tuple[str, str]:
    """New API credentials of the admin: their client id, and a token issued to them."""
    client_id, secret = api_credentials(system)
    response = httpx.post(
        f"{system.url}/rest/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=(client_id, secret),
    )
    assert response.status_code == 200, response.text
    return client_id, response.json()["access_token"]


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_each_worker_serves_and_refuses_a_revoked_client_at_once(workers: System) -> None:
    pids = workers.gateway.workers
    assert len(pids) == WORKERS
    assert workers.gateway.popen.pid not in pids
    client_id, token = _credentials_and_token(workers)
    for pid in pids:
        with only(pid, pids):
            assert _me(workers, token).status_code == 200
    with workers.client(("admin", workers.admin_password), version="labs") as admin:
        listed = admin.get("/users/current/apicredentials", params={"maxResults": 50})
        [entry] = [c for c in listed.json()["data"] if c["clientId"] == client_id]
        revoked = admin.delete(f"/users/current/apicredentials/{entry['id']}")
    assert revoked.status_code == 204, revoked.text
    # The event reaches every worker as it reaches the gateway beside the services.
    for pid in pids:
        with only(pid, pids):
            assert eventually(lambda: _me(workers, token).status_code == 401, 2.0)
            assert_error(_me(workers, token), 401, "revoked")


def test_a_worker_that_dies_is_replaced_and_the_api_keeps_answering(workers: System) -> None:
    before = workers.gateway.workers
    victim, survivor = before
    os.kill(victim, signal.SIGKILL)
    # The survivor answers meanwhile: the API never stopped.
    for _ in range(5):
        got = httpx.get(f"{workers.url}/rest/v1/users/current", auth=("admin", "admin"))
        assert got.status_code == 200
    assert eventually(lambda: victim not in workers.gateway.workers, 30.0)
    after = workers.gateway.workers
    assert len(after) == WORKERS
    assert survivor in after
    [replacement] = [p for p in after if p not in before]
    with only(replacement, after):
        got = httpx.get(f"{workers.url}/rest/v1/users/current", auth=("admin", "admin"))
        assert got.status_code == 200
    assert f"(pid {victim}) exited with -9" in workers.gateway.log.read_text()


def test_workers_end_with_the_process_that_started_them(tmp_path: Path) -> None:
    system = start_embedded(tmp_path, {"PLUMBLINE_WORKERS": str(WORKERS)})
    pids = system.gateway.workers + system.gateway.analytics
    assert len(pids) == WORKERS + 1
    assert all(_running(pid) for pid in pids)
    system.gateway.popen.kill()  # no chance to stop them: they notice it is gone
    system.gateway.popen.wait(30)
    assert eventually(lambda: not any(_running(pid) for pid in pids), 30.0)


def test_traces_and_reports_are_answered_by_the_analytics_process(workers: System) -> None:
    """The analytics process alone answers traces and reports: stopped, they wait while
    everything else answers; killed, it is replaced on the same port and they answer."""
    [analytics] = workers.gateway.analytics
    assert analytics != workers.gateway.popen.pid
    assert analytics not in workers.gateway.workers
    with workers.client(("admin", workers.admin_password), version="labs") as admin:
        project = new_project(admin)
        requirement = type_ids(admin)["REQ"]
        trace = {"project": project, "itemType": requirement}

        def answers(path: str, params: dict[str, int]) -> bool:
            try:
                return admin.get(path, params=params, timeout=1.5).status_code == 200
            except httpx.TimeoutException:
                return False

        assert answers("/trace", trace)
        assert answers("/reports/metadata", {"project": project})
        os.kill(analytics, signal.SIGSTOP)
        try:
            assert not answers("/trace", trace)
            assert not answers("/reports/metadata", {"project": project})
            assert answers(f"/projects/{project}", {})  # the API does not wait for it
        finally:
            os.kill(analytics, signal.SIGCONT)
        os.kill(analytics, signal.SIGKILL)
        assert eventually(lambda: workers.gateway.analytics not in ([], [analytics]), 30.0)
        assert eventually(lambda: answers("/trace", trace), 10.0)
        assert answers("/reports/metadata", {"project": project})
    log = workers.gateway.log.read_text()
    assert f"analytics process 1 (pid {analytics}) exited with -9" in log
