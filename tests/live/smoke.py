"""The live check's smoke test, through the gateway of the overlay running under podman.

``smoke.py RENDERED.yaml BASE_URL [--collector CONTAINER]``: the admin's password is the one
of the Secret the rendered overlay gives identity (``PLUMBLINE_ADMIN_PASSWORD``). Each check
prints ``ok`` or ``FAIL`` with what was seen, then a ``N passed, N failed`` line; the exit
status is 1 when any failed. Standard library and PyYAML only.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ADMIN = "admin"
#: How long the activity may take to go items -> NATS -> activity, and a trace to be exported
#: (the SDK's batch processor sends every 5 s).
EVENTUAL_SECONDS = 60.0


class CheckFailed(Exception):
    """A check saw something other than what it expects (the message says what)."""


@dataclass
class Response:
    status: int
    body: Any


def admin_password(docs: list[dict[str, Any]]) -> str:
    """The password identity sets on ``admin``: its Deployment's secretKeyRef, resolved."""
    deployments = [
        d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "identity"
    ]
    for container in deployments[0]["spec"]["template"]["spec"]["containers"]:
        for env in container.get("env") or []:
            if env["name"] == "PLUMBLINE_ADMIN_PASSWORD":
                ref = env["valueFrom"]["secretKeyRef"]
                for doc in docs:
                    if doc["kind"] == "Secret" and doc["metadata"]["name"] == ref["name"]:
                        return base64.b64decode(doc["data"][ref["key"]]).decode()
    raise SystemExit("smoke: the rendered overlay gives identity no PLUMBLINE_ADMIN_PASSWORD")


@dataclass
class Gateway:
    base: str
    password: str

    def call(
        self, method: str, path: str, body: object = None, *, password: str | None = None
    ) -> Response:
        credentials = f"{ADMIN}:{self.password if password is None else password}"
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Authorization": "Basic " + base64.b64encode(credentials.encode()).decode(),
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                status, raw = reply.status, reply.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        try:
            return Response(status, json.loads(raw) if raw else None)
        except ValueError:
            return Response(status, raw.decode(errors="replace"))

    def expect(self, status: int, method: str, path: str, body: object = None) -> Any:
        response = self.call(method, path, body)
        if response.status != status:
            raise CheckFailed(
                f"{method} {path}: {response.status} (wanted {status}): {response.body}"
            )
        return response.body


def eventually(what: str, probe: Callable[[], str | None]) -> str:
    """``probe()``'s first answer that is not None, tried until EVENTUAL_SECONDS have passed."""
    deadline = time.monotonic() + EVENTUAL_SECONDS
    while True:
        seen = probe()
        if seen is not None:
            return seen
        if time.monotonic() > deadline:
            raise CheckFailed(f"{what}: not within {EVENTUAL_SECONDS:.0f} s")
        time.sleep(0.5)


@dataclass
class Smoke:
    """The checks, in order; each returns what it saw, or raises CheckFailed."""

    gateway: Gateway
    collector: str | None
    name: str = field(default_factory=lambda: f"K8s live {uuid.uuid4().hex[:8]}")
    key: str = field(default_factory=lambda: f"KL{uuid.uuid4().hex[:6].upper()}")
    project: int | None = None
    passed: int = 0
    failed: int = 0

    def check(self, name: str, test: Callable[[], str], *, needs_project: bool = False) -> None:
        try:
            if needs_project and self.project is None:
                raise CheckFailed("not tried: no project was created")
            seen = test()
        except (CheckFailed, OSError) as error:
            self.failed += 1
            print(f"FAIL {name}: {error}", flush=True)
        else:
            self.passed += 1
            print(f"ok   {name}: {seen}", flush=True)

    def run(self) -> None:
        self.check("ready", self.ready)
        self.check("wrong password", self.wrong_password)
        self.check("login", self.login)
        self.check("create project", self.create)
        self.check("activity through NATS", self.activity, needs_project=True)
        self.check("change feed through NATS", self.change, needs_project=True)
        self.check("read project back", self.read_back, needs_project=True)
        self.check("a report made apart", self.report, needs_project=True)
        if self.collector:
            self.check("trace at the collector", self.trace)

    def ready(self) -> str:
        body = self.gateway.expect(200, "GET", "/readyz")
        if body.get("status") != "ready":
            raise CheckFailed(f"/readyz answered {body}")
        return "gateway ready"

    def wrong_password(self) -> str:
        response = self.gateway.call("GET", "/rest/v1/users/current", password="not-it")
        if response.status != 401:
            raise CheckFailed(f"a wrong password got {response.status}, not 401")
        return "a wrong password gets 401"

    def login(self) -> str:
        user = self.gateway.expect(200, "GET", "/rest/v1/users/current")["data"]
        if user.get("username") != ADMIN:
            raise CheckFailed(f"logged in as {user.get('username')!r}, not {ADMIN!r}")
        return f"the Secret's password logs in as {ADMIN} (identity over gRPC, PostgreSQL)"

    def create(self) -> str:
        body = {"projectKey": self.key, "fields": {"name": self.name}}
        meta = self.gateway.expect(201, "POST", "/rest/v1/projects", body)["meta"]
        self.project = int(meta["id"])
        return f"project {self.project} created"

    def activity(self) -> str:
        path = f"/rest/v1/activities?project={self.project}&objectType=PROJECT"
        wanted = f"project {self.name} created"

        def seen() -> str | None:
            feed = self.gateway.expect(200, "GET", path)["data"]
            return f"{wanted!r} in the feed" if wanted in [a.get("details") for a in feed] else None

        return eventually(f"{wanted!r} in GET {path}", seen)

    def change(self) -> str:
        path = f"/rest/labs/events?project={self.project}&objectType=PROJECT&wait=5"

        def seen() -> str | None:
            changes = self.gateway.expect(200, "GET", path)["data"]
            created = [c for c in changes if c.get("type") == "items.project.created"]
            return f"items.project.created at cursor {created[0]['cursor']}" if created else None

        return eventually(f"the project's creation in GET {path}", seen)

    def read_back(self) -> str:
        project = self.gateway.expect(200, "GET", f"/rest/v1/projects/{self.project}")["data"]
        got = (project.get("projectKey"), project.get("fields", {}).get("name"))
        if got != (self.key, self.name):
            raise CheckFailed(f"read back {got}, not {(self.key, self.name)}")
        return f"read back {self.key} {self.name!r}"

    def report(self) -> str:
        """A report: the reports pod claims it and reads the API through the gateway as
        the admin (a token from identity), then the file comes back through the gateway."""
        types = self.gateway.expect(200, "GET", "/rest/v1/itemtypes?maxResults=50")["data"]
        requirement = next(t["id"] for t in types if t.get("typeKey") == "REQ")
        body = {"project": self.project, "format": "CSV", "parameters": {"itemType": requirement}}
        work = self.gateway.expect(202, "POST", "/rest/labs/reports/coverage-summary", body)
        path = f"/rest/labs/reports/works/{work['data']['workId']}"

        def seen() -> str | None:
            data = self.gateway.expect(200, "GET", path)["data"]
            if data["status"] == "FAILED":
                raise CheckFailed(f"the report failed: {data['message']}")
            return f"{data['fileName']}, {data['size']} bytes" if data["status"] == "DONE" else None

        made = eventually(f"the report done at GET {path}", seen)
        self.gateway.expect(200, "GET", f"{path}/file")  # not JSON: read as text
        return made

    def trace(self) -> str:
        def seen() -> str | None:
            logs = subprocess.run(
                ["podman", "logs", str(self.collector)],
                capture_output=True,
                text=True,
                check=False,
            )
            lines = [line for line in logs.stdout.splitlines() if "/v1/traces" in line]
            return lines[-1] if lines else None

        return eventually(f"a trace export in {self.collector}'s log", seen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("rendered", type=Path, help="output of kubectl kustomize")
    parser.add_argument("base_url", help="the gateway, e.g. http://127.0.0.1:18080")
    parser.add_argument("--collector", help="the collector's container (its log is read)")
    args = parser.parse_args(argv)
    docs = [d for d in yaml.safe_load_all(args.rendered.read_text()) if d]
    smoke = Smoke(Gateway(args.base_url.rstrip("/"), admin_password(docs)), args.collector)
    smoke.run()
    print(f"{smoke.passed} passed, {smoke.failed} failed", flush=True)
    return 1 if smoke.failed else 0


if __name__ == "__main__":
    sys.exit(main())
