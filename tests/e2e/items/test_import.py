"""Bulk import through the gateway (``POST /rest/labs/projects/{id}/import``) and the
``plumbline import`` command, in both topologies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api import MATRIX_ROLES, Team, assert_error, eventually
from tests.e2e.topology import System


def jsonl(*lines: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def tree(project: dict[str, Any]) -> list[dict[str, Any]]:
    """A folder with two requirements, a child of one, a defect, a second version of the
    child, and relationships."""
    return [
        {"key": "F", "itemType": "FLD", "fields": {"name": "Checkout"}},
        {"key": "R1", "itemType": "REQ", "parent": "F", "fields": {"name": "Pay by card"}},
        {"key": "R2", "itemType": project["types"]["REQ"]["id"], "parent": "F",
         "fields": {"name": "Pay by invoice", "description": "<p>B2B</p>"}},
        {"key": "R1a", "itemType": "REQ", "parent": "R1", "fields": {"name": "3-D Secure"}},
        {"itemType": "DEF", "fields": {"name": "Card declined twice"}},
        {"item": "R1a", "fields": {"name": "3-D Secure 2"}},
        {"fromItem": "R1", "toItem": "R1a"},
        {"fromItem": "R2", "toItem": "R1"},
    ]  # fmt: skip


def post(client: httpx.Client, project: int, body: bytes) -> httpx.Response:
    return client.post(
        f"/projects/{project}/import",
        content=body,
        headers={"Content-Type": "application/x-ndjson"},
    )


def test_an_import_creates_items_as_posts_would(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    response = post(labs, project["id"], jsonl(*tree(project)))
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert {k: data[k] for k in ("project", "lines", "items", "relationships", "versions")} == {
        "project": project["id"], "lines": 8, "items": 5, "relationships": 2, "versions": 1,
    }  # fmt: skip
    first = data["firstItemId"]
    folder, r1, r2, r1a, defect = range(first, first + 5)

    listed = admin.get("/items", params={"project": project["id"]}).json()
    assert listed["meta"]["pageInfo"]["totalResults"] == 5
    by_id = {item["id"]: item for item in listed["data"]}
    assert by_id[r1]["fields"]["name"] == "Pay by card"
    assert by_id[r1]["location"]["parent"] == {"item": folder}
    assert by_id[r1a]["location"]["sequence"] == "1.1.1"
    assert by_id[r2]["location"]["sequence"] == "1.2"
    assert by_id[defect]["location"]["sequence"] == "2"
    key = project["key"]
    assert by_id[r1]["documentKey"] == f"{key}-REQ-1"
    assert by_id[r1a]["documentKey"] == f"{key}-REQ-3"
    assert by_id[defect]["documentKey"] == f"{key}-DEF-1"
    assert by_id[r2]["fields"]["description"] == "<p>B2B</p>"

    downstream = admin.get(f"/items/{r1}/downstreamrelationships").json()["data"]
    assert [(r["fromItem"], r["toItem"]) for r in downstream] == [(r1, r1a)]
    upstream = admin.get(f"/items/{r1}/upstreamrelationships").json()["data"]
    assert [(r["fromItem"], r["toItem"]) for r in upstream] == [(r2, r1)]

    # The history and the feed get the items as they get items created one by one.
    assert by_id[r1a]["fields"]["name"] == "3-D Secure 2"
    versions = admin.get(f"/items/{r1}/versions").json()
    assert [v["versionNumber"] for v in versions["data"]] == [1]
    versions = admin.get(f"/items/{r1a}/versions").json()
    assert [v["versionNumber"] for v in versions["data"]] == [1, 2]
    first_version = admin.get(f"/items/{r1a}/versions/1/versioneditem").json()["data"]
    assert first_version["fields"]["name"] == "3-D Secure"

    def created_in_feed() -> bool:
        feed = admin.get("/activities", params={"project": project["id"], "maxResults": 50}).json()[
            "data"
        ]
        created = {a.get("item") for a in feed if a["eventType"] == "CREATE"}
        changed = {a.get("item") for a in feed if a["eventType"] == "UPDATE"}
        return created >= set(range(first, first + 5)) and r1a in changed

    assert eventually(created_in_feed)


def test_a_bad_import_names_its_bad_lines_and_writes_nothing(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    lines = tree(project)
    lines[3]["parent"] = "NOWHERE"
    lines.insert(1, {"itemType": "REQ", "fields": {"name": "x", "priority": "urgent"}})
    response = post(labs, project["id"], jsonl(*lines) + b"{oops\n")
    assert_error(response, 400, "4 lines of the import are bad; nothing was imported")
    errors = response.json()["errors"]
    assert [e["line"] for e in errors] == [2, 5, 7, 10]
    assert "NOWHERE" in errors[1]["message"]
    assert "the line with the key 'R1a' is bad" in errors[2]["message"]
    assert "not JSON" in errors[3]["message"]
    listed = admin.get("/items", params={"project": project["id"]}).json()
    assert listed["meta"]["pageInfo"]["totalResults"] == 0


def test_import_is_offered_under_labs_only_and_checks_its_project(
    admin: httpx.Client, labs: httpx.Client, project: dict[str, Any]
) -> None:
    body = jsonl({"itemType": "REQ", "fields": {"name": "x"}})
    assert post(admin, project["id"], body).status_code == 404  # /rest/v1
    assert_error(post(labs, 987654321, body), 404, "No project with id 987654321")
    assert_error(post(labs, 0, body), 400, "projectId")


def test_only_read_write_and_above_may_import(team: Team, system: System) -> None:
    allowed = team.expect("READ_WRITE")
    body = jsonl({"itemType": "REQ", "fields": {"name": "by role"}})
    for role in MATRIX_ROLES:
        labs = httpx.Client(
            base_url=str(team.clients[role].base_url).replace("/rest/v1", "/rest/labs"),
            auth=team.clients[role].auth,
        )
        with labs:
            response = post(labs, team.project["id"], body)
        if allowed[role]:
            assert response.status_code == 200, (role, response.text)
        elif role == "NONE":
            assert response.status_code == 404, (role, response.text)
        else:
            assert response.status_code == 401, (role, response.text)


def test_the_command_imports_a_file_and_writes_the_ids(
    system: System, admin: httpx.Client, project: dict[str, Any], tmp_path: Path
) -> None:
    source = tmp_path / "checkout.jsonl"
    source.write_bytes(jsonl(*tree(project)))
    ids = tmp_path / "ids.json"
    done = subprocess.run(
        [sys.executable, "-m", "plumbline.cli", "import", str(source),
         "--project", str(project["id"]), "--url", system.url,
         "--user", "admin", "--password", system.admin_password, "--ids", str(ids), "--quiet"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "imported 5 items, 1 later version and 2 relationships" in done.stdout + done.stderr
    keys = json.loads(ids.read_text())
    assert set(keys) == {"F", "R1", "R2", "R1a"}
    item = admin.get(f"/items/{keys['R1a']}").json()["data"]
    assert item["fields"]["name"] == "3-D Secure 2"
    assert item["location"]["parent"] == {"item": keys["R1"]}


@pytest.mark.parametrize("bad", [b"[]\n", b'{"itemType": "REQ"}\n'])
def test_the_command_says_which_lines_are_bad(
    system: System, project: dict[str, Any], tmp_path: Path, bad: bytes
) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_bytes(jsonl({"itemType": "REQ", "fields": {"name": "fine"}}) + bad)
    done = subprocess.run(
        [sys.executable, "-m", "plumbline.cli", "import", str(source),
         "--project", str(project["id"]), "--url", system.url,
         "--user", "admin", "--password", system.admin_password, "--quiet"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "line 2:" in done.stdout + done.stderr
