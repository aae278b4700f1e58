"""The OpenAPI description: what each version lists, what the routes declare, and a bounded
schemathesis run against the served description (no 5xx, responses as described, only
declared status codes)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openapi_spec_validator import validate

from plumbline.common.dates import format_datetime, utcnow
from plumbline.gateway.routes.events import MAX_WAIT
from tests.e2e.api import assert_error, new_project, unique
from tests.e2e.topology import System, start_embedded

VERSIONS = ("v1", "latest", "labs")
# Members of GET bodies a client cannot set: no request body may describe them.
READ_ONLY = {
    "createdDate",
    "modifiedDate",
    "lastActivityDate",
    "createdBy",
    "modifiedBy",
    "documentKey",
    "lock",
    "resources",
    "type",
    "itemCount",
    "archived",
    "avatarUrl",
    "suspect",
    "lastLockedDate",
    "lockedBy",
}
# Bodies whose ``id`` names the record to act on, not the record's own id.
ID_IS_INPUT = {"ItemPatch", "RunUpdate"}
# Bodies that set a member GET bodies hold read-only (PUT /testplans/{id}/archived).
SETS_READ_ONLY = {"ArchivedBody": {"archived"}}
METHODS = ("get", "put", "post", "delete", "patch")
WRITES = ("POST", "PUT", "PATCH", "DELETE")
ST = Path(sys.executable).parent / "st"
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
)
SEED = 20240611


def _document(system: System, version: str) -> dict[str, Any]:
    response = httpx.get(
        f"{system.url}/rest/{version}/api-docs", auth=("admin", system.admin_password)
    )
    assert response.status_code == 200, response.text
    document: dict[str, Any] = response.json()
    document["x-version"] = version
    return document


def _operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(method, path) -> operation; paths of the version lose their /rest/<version>."""
    prefix = "/rest/" + document["x-version"]
    found = {}
    for path, item in document["paths"].items():
        mine = path == prefix or path.startswith(prefix + "/")
        short = (path[len(prefix) :] or "/") if mine else path
        for method, operation in item.items():
            if method in METHODS:
                found[(method, short)] = operation
    return found


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _parameters(operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in operation.get("parameters", [])}


def test_each_version_is_valid_openapi_3_0(system: System) -> None:
    for version in VERSIONS:
        document = _document(system, version)
        assert document["openapi"] == "3.0.3"
        validate(document)
        text = str(document)
        # FastAPI's own validation 422 is never declared; the one 422 is the JUnit
        # ingest's (an Idempotency-Key used for another report).
        declared = {
            (method, path)
            for path, item in document["paths"].items()
            for method, operation in item.items()
            if isinstance(operation, dict) and "422" in operation.get("responses", {})
        }
        assert declared <= {("post", "/rest/labs/testcycles/{testCycleId}/results")}, declared
        assert "HTTPValidationError" not in text
        assert "'type': 'null'" not in text


def test_v1_lists_only_what_v1_serves(system: System) -> None:
    v1 = _operations(_document(system, "v1"))
    labs = _operations(_document(system, "labs"))
    assert set(v1) < set(labs)
    only_labs = set(labs) - set(v1)
    assert {
        ("get", "/categories"),
        ("post", "/filters"),
        ("post", "/users/current/apicredentials"),
    } <= only_labs
    assert ("get", "/filters") in v1
    assert ("get", "/users/current") in v1
    with httpx.Client(auth=("admin", system.admin_password), timeout=30) as client:
        for method, path in sorted(only_labs):
            concrete = path.replace("{", "").replace("}", "")
            for name in ("itemId", "categoryPathId", "id"):
                concrete = concrete.replace(name, "1")
            body: dict[str, Any] | None = {} if method in ("post", "put") else None
            answer = client.request(method, f"{system.url}/rest/v1{concrete}", json=body)
            assert answer.status_code == 404, (method, path, answer.text)
            assert "under /rest/labs only" in answer.json()["meta"]["message"]
            served = client.request(method, f"{system.url}/rest/labs{concrete}", json=body)
            assert "under /rest/labs only" not in served.text, (method, path)
    listed = httpx.get(f"{system.url}/rest/v1", auth=("admin", system.admin_password)).json()
    assert "categories" not in [e["name"] for e in listed["data"]]


def test_query_parameters_are_declared(system: System) -> None:
    document = _document(system, "v1")
    operations = _operations(document)
    items = _parameters(operations[("get", "/items")])
    assert items["project"]["required"] is True
    assert items["project"]["schema"] == {"type": "integer", "format": "int64"}
    assert items["maxResults"]["schema"] | {"format": "int64"} == {
        "type": "integer",
        "format": "int64",
        "minimum": 1,
        "maximum": 50,
        "default": 20,
    }
    assert items["startAt"]["schema"]["minimum"] == 0
    assert items["startAt"]["required"] is False
    assert items["rootOnly"]["schema"]["type"] == "boolean"
    assert items["include"]["schema"]["type"] == "array"
    projects = _parameters(operations[("get", "/projects")])
    assert "data.createdBy" in projects["include"]["schema"]["items"]["enum"]
    assert "include" not in _parameters(operations[("get", "/users")])  # users link nothing
    users = _parameters(operations[("get", "/users")])
    assert users["lastName"]["schema"]["type"] == "array"
    search = _parameters(operations[("get", "/abstractitems")])
    assert "name.desc" in search["sortBy"]["schema"]["enum"]
    assert search["project"]["schema"]["items"]["type"] == "integer"
    assert search["createdDate"]["schema"]["maxItems"] == 2
    feed = _parameters(operations[("get", "/activities")])
    assert feed["project"]["required"] is True
    assert "DELETE" in feed["eventType"]["schema"]["items"]["enum"]
    for (method, path), operation in operations.items():
        for parameter in operation.get("parameters", []):
            assert parameter["name"] != "version", (method, path)
            if parameter["in"] == "path":
                assert parameter["required"] is True
    for key in (("post", "/items"), ("put", "/items/{id}"), ("patch", "/items/{id}")):
        assert "setGlobalIdManually" in _parameters(operations[key]), key


def test_request_bodies_leave_read_only_members_out(system: System) -> None:
    document = _document(system, "labs")
    seen: set[str] = set()

    def walk(schema: dict[str, Any]) -> None:
        name = schema.get("$ref", "").rsplit("/", 1)[-1]
        if name in seen:
            return
        if name:
            seen.add(name)
        schema = _resolve(document, schema)
        properties = schema.get("properties", {})
        read_only = READ_ONLY - SETS_READ_ONLY.get(name, set())
        assert not read_only & set(properties), (name, read_only & set(properties))
        if name not in ID_IS_INPUT:
            assert "id" not in properties, name
        children = [*properties.values(), *schema.get("allOf", [])]
        if "items" in schema:
            children.append(schema["items"])
        for child in children:
            walk(child)

    bodies = 0
    for operation in _operations(document).values():
        for media in operation.get("requestBody", {}).get("content", {}).values():
            bodies += 1
            walk(media["schema"])
    assert bodies > 30
    location = _resolve(document, {"$ref": "#/components/schemas/ItemLocationBody"})
    assert set(location["properties"]) == {"parent"}
    item = _resolve(document, {"$ref": "#/components/schemas/ItemBody"})
    assert set(item["properties"]) == {
        "globalId",
        "project",
        "itemType",
        "childItemType",
        "location",
        "fields",
    }


def test_responses_describe_the_envelope_and_the_errors(system: System) -> None:
    document = _document(system, "v1")
    operations = _operations(document)
    schemas = document["components"]["schemas"]
    one = operations[("get", "/items/{id}")]["responses"]["200"]
    wrapper = _resolve(document, one["content"]["application/json"]["schema"])
    assert wrapper["properties"]["data"] == {"$ref": "#/components/schemas/Item"}
    assert set(wrapper["required"]) == {"meta", "links", "data"}
    assert "linked" in wrapper["properties"]
    page = _resolve(
        document,
        operations[("get", "/items")]["responses"]["200"]["content"]["application/json"]["schema"],
    )
    assert page["properties"]["data"]["items"] == {"$ref": "#/components/schemas/Item"}
    meta = _resolve(document, page["properties"]["meta"])
    assert "pageInfo" in meta["required"]
    item = schemas["Item"]
    assert {"id", "documentKey", "fields", "location", "lock", "resources"} <= set(item["required"])
    assert item["properties"]["type"]["enum"] == ["items"]
    error = schemas["ErrorResponse"]
    assert _resolve(document, error["properties"]["meta"])["required"] == [
        "status",
        "timestamp",
        "message",
    ]
    for (method, path), operation in operations.items():
        statuses = set(operation["responses"])
        if path != "/rest/labs/testcycles/{testCycleId}/results":
            assert "422" not in statuses, (method, path)
        assert statuses & {"200", "201", "204"}, (method, path)
        if not path.startswith("/rest"):
            assert {"401", "405", "429"} <= statuses, (method, path)
        if operation.get("parameters") or "requestBody" in operation:
            assert "400" in statuses, (method, path)
        for status in statuses - {"200", "201", "204", "206"}:
            (reference,) = operation["responses"][status].values()
            assert reference.startswith("#/components/responses/"), (method, path, status)
    created = operations[("post", "/projects")]["responses"]["201"]
    assert created["content"]["application/json"]["schema"]["$ref"].endswith("/CreatedResponse")
    assert operations[("get", "/rest")].get("security") == []


def test_declared_parameters_keep_todays_messages(admin: httpx.Client) -> None:
    cases: list[tuple[str, dict[str, str | int | list[str]], str]] = [
        ("/items", {}, "the query parameter project is required"),
        ("/items", {"project": "x"}, "project must be an integer, got 'x'"),
        ("/items", {"project": 1, "maxResults": 80}, "maxResults must be between 1 and 50, got 80"),
        ("/users", {"startAt": -1}, "startAt must be between 0 and 2147483647, got -1"),
        ("/usergroups", {"project": ["1", "2"]}, "project may be given once, got 2 values"),
        ("/activities", {"project": 1, "eventType": "nap"}, "eventType must be one of"),
        ("/abstractitems", {"sortBy": "colour.asc"}, "sortBy must be <field>.asc"),
    ]
    for path, params, message in cases:
        response = admin.get(path, params=params)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["meta"]["message"].startswith(message), response.text


def test_parameters_are_read_after_authentication(anonymous: httpx.Client) -> None:
    for path, params in (
        ("/items", {}),
        ("/items", {"project": "x"}),
        ("/users", {"maxResults": 80}),
    ):
        assert anonymous.get(path, params=params).status_code == 401


# -- schemathesis --------------------------------------------------------------------


def _seed(admin: httpx.Client) -> dict[str, Any]:
    """Records for the run to find, so that it reaches more than 404s."""

    def created(response: httpx.Response) -> int:
        assert response.status_code == 201, response.text
        return int(response.json()["meta"]["id"])

    def first(path: str) -> int:
        return int(admin.get(path).json()["data"][0]["id"])

    project = new_project(admin, unique("ST").upper())
    types = admin.get("/itemtypes", params={"maxResults": 50}).json()["data"]
    requirement = next(t["id"] for t in types if t["typeKey"] == "REQ")

    def item(name: str, parent: int | None = None) -> int:
        body: dict[str, Any] = {"project": project, "itemType": requirement}
        body["fields"] = {"name": name}
        if parent is not None:
            body["location"] = {"parent": {"item": parent}}
        return created(admin.post("/items", json=body))

    # The item every {id} of /items names: it has a parent, a tag, a link, a comment, a
    # relationship and a synchronized copy.
    child = item("Child", item("Parent"))
    other = item("Other")
    tag = created(admin.post("/tags", json={"name": unique("t"), "project": project}))
    admin.post(f"/items/{child}/tags", json={"tag": tag})
    link = created(admin.post(f"/items/{child}/links", json={"url": "https://example.com"}))
    admin.post(f"/items/{child}/synceditems", json={"item": other})
    text = {"body": {"text": "hi"}, "location": {"item": child}}
    comment = created(admin.post("/comments", json=text))
    relationship = created(admin.post("/relationships", json={"fromItem": child, "toItem": other}))
    release = created(admin.post("/releases", json={"name": unique("r"), "project": project}))
    user = created(
        admin.post(
            "/users",
            json={
                "username": unique("st"),
                "password": unique("pw"),
                "firstName": "Schema",
                "lastName": "Thesis",
                "email": f"{unique('st')}@example.com",
                "licenseType": "NAMED",
            },
        )
    )
    group = created(admin.post("/usergroups", json={"name": unique("g"), "project": project}))
    admin.post(f"/usergroups/{group}/users", json={"user": user})
    labs = str(admin.base_url).rstrip("/").replace("/rest/v1", "/rest/labs")
    everything = {"rule": {"field": {"name": "name"}, "operator": "IS_NOT_EMPTY", "values": []}}
    new_filter = {"name": unique("f"), "filterQuery": everything, "public": True}
    new_filter |= {"projectScope": "SPECIFIED", "specifiedProject": project}
    filter_id = created(admin.post(f"{labs}/filters", json=new_filter))
    category = created(admin.post(f"{labs}/categories", json={"name": unique("c")}))
    pick_list = first("/picklists")
    test_case_type = next(t["id"] for t in types if t["typeKey"] == "TC")
    steps = [{"action": "Open", "expectedResult": "Opens", "notes": ""}]
    test_case = created(
        admin.post(
            "/items",
            json={
                "project": project,
                "itemType": test_case_type,
                "fields": {"name": "Case", "testCaseSteps": steps},
            },
        )
    )
    plan = created(admin.post("/testplans", json={"project": project, "fields": {"name": "Plan"}}))
    test_group = created(admin.post(f"/testplans/{plan}/testgroups", json={"name": "Group"}))
    admin.post(f"/testplans/{plan}/testgroups/{test_group}/testcases", json={"testCase": test_case})
    dates = {"name": "Cycle", "startDate": "2024-01-01", "endDate": "2024-01-31"}
    cycle = created(admin.post(f"/testplans/{plan}/testcycles", json={"fields": dates}))
    run = first(f"/testcycles/{cycle}/testruns")
    # Test plans and runs have tags, links, comments and relationships as items do.
    own: dict[str, int] = {}
    for base, record in (("testplans", plan), ("testruns", run)):
        admin.post(f"/{base}/{record}/tags", json={"tag": tag})
        own[f"{base}.linkId"] = created(
            admin.post(f"/{base}/{record}/links", json={"url": "https://example.com"})
        )
        created(
            admin.post("/comments", json={"body": {"text": "hi"}, "location": {"item": record}})
        )
        created(admin.post("/relationships", json={"fromItem": child, "toItem": record}))
    # An attachment with a file, on the item, the plan and the run.
    attachment = created(
        admin.post(f"/projects/{project}/attachments", json={"fields": {"name": "Evidence"}})
    )
    admin.put(f"/attachments/{attachment}/file", files={"file": ("a.txt", b"bytes", "text/plain")})
    for base, record in (("items", child), ("testplans", plan), ("testruns", run)):
        created(admin.post(f"/{base}/{record}/attachments", json={"attachment": attachment}))
    baseline = created(admin.post(f"{labs}/baselines", json={"name": "B", "project": project}))
    return {
        **own,
        "project": project,
        "projectId": project,
        "item": child,
        "itemId": child,
        "syncedItemId": other,
        "itemTypeId": requirement,
        "tag": tag,
        "tagId": tag,
        "releaseId": release,
        "comment": comment,
        "relationshipId": relationship,
        "relationshipType": first("/relationshiptypes"),
        "linkId": link,
        "userId": user,
        "group": group,
        "picklistId": pick_list,
        "picklistOptionId": first(f"/picklists/{pick_list}/options"),
        "ruleSet": first("/relationshiprulesets"),
        "activityId": int(
            admin.get("/activities", params={"project": project}).json()["data"][0]["id"]
        ),
        "filter": filter_id,
        "filterId": filter_id,
        "categoryPathId": category,
        "plan": plan,
        "testCycleId": cycle,
        "testGroupId": test_group,
        "testCaseId": test_case,
        "run": run,
        "attachmentId": attachment,
        "baselineId": baseline,
        "versionNum": 1,
        "timestamp": format_datetime(utcnow()),
        # GET /files: the file's own URL.
        "url": f"{str(admin.base_url).rstrip('/')}/attachments/{attachment}/file",
    }


# Path parameters named after what they hold, and what ``{id}`` holds by resource.
PATH_NAMES = (
    "projectId",
    "itemId",
    "syncedItemId",
    "itemTypeId",
    "tagId",
    "releaseId",
    "relationshipId",
    "linkId",
    "userId",
    "picklistId",
    "picklistOptionId",
    "activityId",
    "filterId",
    "categoryPathId",
    "testCycleId",
    "testGroupId",
    "testCaseId",
    "attachmentId",
    "baselineId",
    "versionNum",
)
ID_BY_RESOURCE = {
    "items": "item",
    "abstractitems": "item",
    "tags": "tag",
    "comments": "comment",
    "usergroups": "group",
    "relationshiptypes": "relationshipType",
    "relationshiprulesets": "ruleSet",
    "filters": "filter",
    "testplans": "plan",
    "testruns": "run",
}


def test_every_read_answers_with_what_the_page_fills_in(
    system: System, admin: httpx.Client
) -> None:
    """What Try it out sends: the required parameters and the declared defaults."""
    records = _seed(admin)
    document = _document(system, "v1")
    reads = [(p, o) for (m, p), o in _operations(document).items() if m == "get"]
    assert len(reads) > 50
    for path, operation in reads:
        url, query = path, {}
        for parameter in operation.get("parameters", []):
            name = parameter["name"]
            if parameter["in"] == "path":
                resource = path.split("/")[1]
                record = name if name != "id" else ID_BY_RESOURCE[resource]
                value = records.get(f"{resource}.{name}", records[record])
                url = url.replace(f"{{{name}}}", str(value))
            elif parameter["required"]:
                query[name] = records[name]
            elif "default" in parameter["schema"]:
                query[name] = parameter["schema"]["default"]
        base = system.url if path.startswith("/rest") else str(admin.base_url).rstrip("/")
        response = admin.get(f"{base}{url}", params=query)
        if path == "/baselines/{baselineId}/reviewlink":  # Plumbline has no reviews (0013)
            assert_error(response, 404, "has no review")
            continue
        assert response.status_code == 200, (path, query, response.text)


def _config(records: dict[str, Any], version: str) -> str:
    """schemathesis.toml: the seeded ids for parameters, ``id`` by the path it is in."""
    lines = ["[parameters]", f'"query.project" = {records["project"]}']
    lines += [f'"path.{name}" = {records[name]}' for name in PATH_NAMES]
    for resource, record in ID_BY_RESOURCE.items():
        lines += [
            "",
            "[[operations]]",
            f'include-path-regex = "^/rest/{version}/{resource}/\\\\{{id\\\\}}"',
            f'parameters = {{ "path.id" = {records[record]} }}',
        ]
    return "\n".join(lines) + "\n"


def _schemathesis(
    system: System, version: str, workdir: Path, records: dict[str, Any], *options: str
) -> float:
    """Runs schemathesis; fails with its report on any failure. Returns the seconds it took."""
    if not ST.exists():
        pytest.fail(f"schemathesis is not installed ({ST}); make setup installs it")
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "schemathesis.toml"
    config.write_text(_config(records, version))
    command = [
        str(ST),
        "--no-color",
        "--config-file",
        str(config),
        "run",
        f"{system.url}/rest/{version}/api-docs",
        "--auth",
        f"admin:{system.admin_password}",
        "--checks",
        ",".join(CHECKS),
        "--phases",
        "coverage,fuzzing",
        "--seed",
        str(SEED),
        "--workers",
        "1",
        "--generation-database",
        "none",
        "--request-timeout",
        # Above the longest a request may take by design: a long poll of the change feed
        # (``wait`` up to MAX_WAIT, which the coverage phase sends) past the newest change.
        str(int(MAX_WAIT + 30)),
        *options,
    ]
    started = time.monotonic()
    # JSON Lines bodies (the import's) are written by a hook of ours (ndjson_hooks.py).
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "ndjson_hooks",
        "PYTHONPATH": str(Path(__file__).parent),
    }
    result = subprocess.run(
        command, cwd=workdir, capture_output=True, text=True, timeout=600, check=False, env=env
    )
    took = time.monotonic() - started
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-20000:]
    print(f"schemathesis {' '.join(options)}: {took:.0f}s\n{output[-1500:]}")
    return took


@pytest.mark.slow
def test_schemathesis_reads(system: System, admin: httpx.Client, tmp_path: Path) -> None:
    """Every GET of the v1 description, in each topology (reads change nothing shared)."""
    records = _seed(admin)
    _schemathesis(
        system, "v1", tmp_path, records, "--include-method", "GET", "--max-examples", "10"
    )


@pytest.mark.slow
def test_schemathesis_labs_reads(system: System, admin: httpx.Client, tmp_path: Path) -> None:
    """Every GET that labs adds to v1 (traces, reports, the change feed, webhooks,
    baseline comparison...), in each topology."""
    v1 = {path for method, path in _operations(_document(system, "v1")) if method == "get"}
    labs = {path for method, path in _operations(_document(system, "labs")) if method == "get"}
    added = sorted(labs - v1)
    assert "/reports/metadata" in added
    assert "/trace" in added
    only = "^/rest/labs(" + "|".join(re.escape(path) for path in added) + ")$"
    records = _seed(admin)
    _schemathesis(
        system,
        "labs",
        tmp_path,
        records,
        "--include-path-regex",
        only,
        # Include options select what any of them names; an exclusion narrows that.
        *(option for method in WRITES for option in ("--exclude-method", method)),
        "--max-examples",
        "5",
    )


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[System]:
    """A system of its own: random writes must not change what other tests share."""
    running = start_embedded(tmp_path_factory.mktemp("schemathesis"))
    try:
        yield running
    finally:
        codes = running.stop()
        assert not [code for code in codes.values() if code != 0], codes


@pytest.mark.slow
def test_schemathesis_writes(scratch: System, tmp_path: Path) -> None:
    """Every write of the labs description (a superset of v1) on a scratch system."""
    with httpx.Client(
        base_url=f"{scratch.url}/rest/v1", auth=("admin", scratch.admin_password), timeout=30
    ) as admin:
        records = _seed(admin)
    _schemathesis(
        scratch, "labs", tmp_path, records, "--exclude-method", "GET", "--max-examples", "5"
    )
